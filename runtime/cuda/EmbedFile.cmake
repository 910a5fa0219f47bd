# cmake -DINPUT=file -DOUTPUT=file.inc -DNAME=symbol -P EmbedFile.cmake
# Writes the bytes of INPUT as a 16-byte-aligned C++ array: the driver reads
# a fatbin in place and wants it aligned.
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by runtime/cuda/EmbedFile.cmake.\n"
  "alignas(16) static const unsigned char ${NAME}[] = {\n${bytes}};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
