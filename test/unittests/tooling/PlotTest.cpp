//===- PlotTest.cpp - the training-curve SVG ------------------------------===//
//
// Plots are written to a temporary directory and read back with a strict
// little XML parser (elements, attributes, text, entity references; anything
// else fails), then checked by the classes and ids the writer promises:
// series per panel, gaps at non-finite values, escaping, where the extremes
// land, decimation of long runs, ticks, and the errors.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/Plot.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

using ampc::tools::PlotRun;
using ampc::tools::writeTrainingPlot;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// A strict parser for the XML subset the plot writer emits.
//===----------------------------------------------------------------------===//

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<Element> children;
  std::string text; // decoded character data directly inside the element

  std::string attr(const std::string &key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? "" : it->second;
  }
  // Every descendant (and this element) for which `pred` holds.
  void collect(const std::function<bool(const Element &)> &pred,
               std::vector<const Element *> &out) const {
    if (pred(*this))
      out.push_back(this);
    for (const Element &c : children)
      c.collect(pred, out);
  }
  std::vector<const Element *>
  all(const std::function<bool(const Element &)> &pred) const {
    std::vector<const Element *> out;
    collect(pred, out);
    return out;
  }
  // Elements `name` whose class is `cls` (the writer uses single classes).
  std::vector<const Element *> byClass(const std::string &name,
                                       const std::string &cls) const {
    return all([&](const Element &e) {
      return e.name == name && e.attr("class") == cls;
    });
  }
  const Element *byId(const std::string &id) const {
    auto found = all([&](const Element &e) { return e.attr("id") == id; });
    return found.size() == 1 ? found[0] : nullptr;
  }
  // The text of the first <text> at or below this element.
  std::string firstText() const {
    auto texts = all([](const Element &e) { return e.name == "text"; });
    return texts.empty() ? "" : texts[0]->text;
  }
  // All text below this element, concatenated.
  std::string allText() const {
    std::string s = text;
    for (const Element &c : children)
      s += c.allText();
    return s;
  }
};

bool validUtf8(const std::string &s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80         ? 1
                 : (c >> 5) == 6  ? 2
                 : (c >> 4) == 14 ? 3
                 : (c >> 3) == 30 ? 4
                                  : 0;
    if (len == 0 || i + len > s.size())
      return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return false;
    i += len;
  }
  return true;
}

class XmlParser {
public:
  explicit XmlParser(const std::string &s) : s_(s) {}

  bool parse(Element &root) {
    if (!validUtf8(s_))
      return fail("not UTF-8");
    if (s_.compare(0, 5, "<?xml") == 0) {
      size_t end = s_.find("?>");
      if (end == std::string::npos)
        return fail("unterminated declaration");
      pos_ = end + 2;
    }
    skipSpace();
    if (!element(root))
      return false;
    skipSpace();
    return pos_ == s_.size() || fail("content after the root element");
  }
  const std::string &error() const { return error_; }

private:
  bool fail(const std::string &what) {
    if (error_.empty())
      error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  void skipSpace() {
    while (pos_ < s_.size() &&
           std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool name(std::string &out) {
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
            std::string("_:-.").find(s_[pos_]) != std::string::npos))
      ++pos_;
    out = s_.substr(start, pos_ - start);
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
      return fail("bad name");
    return true;
  }
  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  // Character data up to `stop`, with entity references decoded; a raw '<'
  // (or the stop quote) ends it, a bare '&' is an error.
  bool chars(char stop, std::string &out) {
    while (pos_ < s_.size() && s_[pos_] != stop && s_[pos_] != '<') {
      if (s_[pos_] != '&') {
        out += s_[pos_++];
        continue;
      }
      size_t semi = s_.find(';', pos_);
      if (semi == std::string::npos || semi - pos_ > 10)
        return fail("bare &");
      std::string ref = s_.substr(pos_ + 1, semi - pos_ - 1);
      static const std::map<std::string, char> kNamed = {{"amp", '&'},
                                                         {"lt", '<'},
                                                         {"gt", '>'},
                                                         {"quot", '"'},
                                                         {"apos", '\''}};
      if (auto it = kNamed.find(ref); it != kNamed.end())
        out += it->second;
      else if (ref.size() > 2 && ref[0] == '#' && ref[1] == 'x')
        appendUtf8(out, unsigned(std::stoul(ref.substr(2), nullptr, 16)));
      else if (ref.size() > 1 && ref[0] == '#')
        appendUtf8(out, unsigned(std::stoul(ref.substr(1))));
      else
        return fail("unknown entity &" + ref + ";");
      pos_ = semi + 1;
    }
    return true;
  }
  bool element(Element &e) {
    if (pos_ >= s_.size() || s_[pos_] != '<')
      return fail("expected <");
    ++pos_;
    if (!name(e.name))
      return false;
    while (true) {
      bool spaced = pos_ < s_.size() &&
                    std::isspace(static_cast<unsigned char>(s_[pos_]));
      skipSpace();
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return true;
      }
      if (pos_ < s_.size() && s_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (!spaced)
        return fail("attributes must be separated by space");
      std::string key, value;
      if (!name(key))
        return false;
      if (pos_ + 1 >= s_.size() || s_[pos_] != '=' ||
          (s_[pos_ + 1] != '"' && s_[pos_ + 1] != '\''))
        return fail("attribute " + key + " is not name=\"value\"");
      char quote = s_[pos_ + 1];
      pos_ += 2;
      if (!chars(quote, value))
        return false;
      if (pos_ >= s_.size() || s_[pos_] != quote)
        return fail("unterminated attribute " + key);
      ++pos_;
      if (!e.attrs.emplace(key, value).second)
        return fail("duplicate attribute " + key);
    }
    while (true) {
      if (!chars('<', e.text))
        return false;
      if (pos_ >= s_.size())
        return fail("unclosed <" + e.name + ">");
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        std::string closing;
        if (!name(closing))
          return false;
        if (closing != e.name)
          return fail("</" + closing + "> closes <" + e.name + ">");
        skipSpace();
        if (pos_ >= s_.size() || s_[pos_] != '>')
          return fail("bad end tag");
        ++pos_;
        return true;
      }
      e.children.emplace_back();
      if (!element(e.children.back()))
        return false;
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
  std::string error_;
};

TEST(PlotXmlChecker, RejectsMalformed) {
  for (const char *bad :
       {"<a>", "<a></b>", "<a x=1/>", "<a x=\"1\" x=\"2\"/>", "<a>&</a>",
        "<a>&nope;</a>", "<a/><b/>", "<a x=\"<\"/>", "<a>\xff</a>",
        "<a x=\"1\"y=\"2\"/>"}) {
    Element root;
    EXPECT_FALSE(XmlParser(bad).parse(root)) << bad;
  }
  Element root;
  ASSERT_TRUE(XmlParser("<?xml version=\"1.0\"?>\n<a k='&lt;&#x2070;'>x "
                        "&amp; y<b/></a>\n")
                  .parse(root));
  EXPECT_EQ(root.attr("k"), "<\xE2\x81\xB0");
  EXPECT_EQ(root.text, "x & y");
  ASSERT_EQ(root.children.size(), 1u);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::vector<std::pair<double, double>> points(const Element &polyline) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(polyline.attr("points"));
  std::string pair;
  while (in >> pair) {
    size_t comma = pair.find(',');
    out.push_back(
        {std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1))});
  }
  return out;
}

struct Area {
  double x, y, width, height;
};

Area plotArea(const Element &panel) {
  auto rects = panel.byClass("rect", "plot-area");
  EXPECT_EQ(rects.size(), 1u);
  if (rects.empty())
    return {0, 0, 0, 0};
  const Element &r = *rects[0];
  return {std::stod(r.attr("x")), std::stod(r.attr("y")),
          std::stod(r.attr("width")), std::stod(r.attr("height"))};
}

PlotRun decayingRun(const std::string &label, size_t steps, double noise,
                    bool scaled) {
  PlotRun run;
  run.label = label;
  for (size_t i = 0; i < steps; ++i) {
    run.step.push_back(double(i));
    // Deterministic "noise" so the extremes are known.
    double wiggle = noise * std::sin(double(i) * 1.7);
    run.trainLoss.push_back(0.3 + 2.0 * std::exp(-double(i) / 400) + wiggle);
    if (scaled)
      run.lossScale.push_back(65536);
  }
  return run;
}

class Plot : public ampc::rt::test::ScratchDirTest {
protected:
  Plot() : ScratchDirTest("plot") {}

  // Writes the plot, then parses it back into `root`.
  void plot(const std::vector<PlotRun> &runs, const std::string &title = "t") {
    path = dir + "/plot.svg";
    ampc::rt::Status s = writeTrainingPlot(path, title, runs);
    ASSERT_TRUE(s.isOk()) << s.message();
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    file = ampc::rt::test::slurp(path);
    XmlParser parser(file);
    root = Element();
    ASSERT_TRUE(parser.parse(root)) << parser.error();
  }
  const Element &panel(const std::string &id) {
    const Element *p = root.byId(id);
    EXPECT_NE(p, nullptr) << id;
    static const Element kEmpty;
    return p ? *p : kEmpty;
  }

  std::string path, file; // dir: the fixture's scratch directory
  Element root;
};

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

TEST_F(Plot, StandaloneSvgWithThreePanels) {
  PlotRun amp = decayingRun("AMP O2 f16", 300, 0.05, true);
  amp.evalStep = {99, 199, 299};
  amp.testLoss = {1.2, 0.9, 0.7};
  amp.testAccuracy = {0.6, 0.7, 0.75};
  plot({amp}, "mlp");
  EXPECT_EQ(root.name, "svg");
  EXPECT_EQ(root.attr("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(root.attr("version"), "1.1");
  double width = std::stod(root.attr("width"));
  double height = std::stod(root.attr("height"));
  EXPECT_EQ(root.attr("viewBox"),
            "0 0 " + root.attr("width") + " " + root.attr("height"));
  EXPECT_GT(width, 0);
  EXPECT_GT(height, 0);
  // Nothing that runs code or loads from elsewhere.
  auto outside = root.all([](const Element &e) {
    return e.name == "script" || e.name == "style" || e.name == "image" ||
           e.name == "foreignObject" || e.name == "use" ||
           e.attrs.count("href") || e.attrs.count("xlink:href") ||
           e.attrs.count("style") ||
           std::any_of(e.attrs.begin(), e.attrs.end(), [](const auto &kv) {
             return kv.first.rfind("on", 0) == 0;
           });
  });
  EXPECT_TRUE(outside.empty());
  EXPECT_EQ(file.find("url("), std::string::npos);
  // Three panels stacked top to bottom inside the canvas, sharing x.
  Area loss = plotArea(panel("loss-panel"));
  Area accuracy = plotArea(panel("accuracy-panel"));
  Area scale = plotArea(panel("scale-panel"));
  EXPECT_LT(loss.y + loss.height, accuracy.y);
  EXPECT_LT(accuracy.y + accuracy.height, scale.y);
  EXPECT_LE(scale.y + scale.height, height);
  EXPECT_EQ(loss.x, scale.x);
  EXPECT_EQ(loss.width, scale.width);
  EXPECT_LE(loss.x + loss.width, width);
  // The title heads the file and the legend names the run and the EMA.
  EXPECT_NE(root.allText().find("mlp"), std::string::npos);
  EXPECT_NE(root.allText().find("AMP O2 f16"), std::string::npos);
  EXPECT_NE(root.allText().find("exponential moving average"),
            std::string::npos);
}

TEST_F(Plot, SeriesPerPanel) {
  PlotRun amp = decayingRun("AMP", 300, 0.05, true);
  amp.evalStep = {99, 199, 299};
  amp.testLoss = {1.2, 0.9, 0.7};
  amp.testAccuracy = {0.6, 0.7, 0.75};
  PlotRun f32 = amp;
  f32.label = "f32";
  f32.lossScale.clear();
  plot({amp, f32});
  const Element &loss = panel("loss-panel");
  EXPECT_EQ(loss.byClass("polyline", "train-raw").size(), 2u);
  EXPECT_EQ(loss.byClass("polyline", "train-ema").size(), 2u);
  EXPECT_EQ(loss.byClass("polyline", "test-loss").size(), 2u);
  EXPECT_EQ(loss.byClass("circle", "test-loss-marker").size(), 6u);
  const Element &accuracy = panel("accuracy-panel");
  EXPECT_EQ(accuracy.byClass("polyline", "accuracy").size(), 2u);
  EXPECT_EQ(accuracy.byClass("circle", "accuracy-marker").size(), 6u);
  // Only the AMP run scales its loss.
  const Element &scale = panel("scale-panel");
  EXPECT_EQ(scale.byClass("polyline", "loss-scale").size(), 1u);
  EXPECT_EQ(
      scale.all([](const Element &e) { return e.name == "polyline"; }).size(),
      1u);
  // Own colour per run, the second one dashed.
  auto ema = loss.byClass("polyline", "train-ema");
  EXPECT_NE(ema[0]->attr("stroke"), ema[1]->attr("stroke"));
  EXPECT_EQ(ema[0]->attr("stroke-dasharray"), "");
  EXPECT_NE(ema[1]->attr("stroke-dasharray"), "");
  auto legend = root.byClass("g", "legend");
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_EQ(legend[1]->firstText(), "f32");
}

TEST_F(Plot, NonFiniteValuesBreakTheLine) {
  PlotRun run;
  run.label = "amp";
  for (int i = 0; i < 10; ++i) {
    run.step.push_back(i);
    run.trainLoss.push_back(i == 4 ? kNaN : i == 7 ? kInf : 1.0 + i);
    run.lossScale.push_back(i < 4 ? 65536 : 32768);
  }
  run.skippedSteps = {4};
  plot({run});
  const Element &loss = panel("loss-panel");
  auto raw = loss.byClass("polyline", "train-raw");
  // 0..3, 5..6, 8..9.
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(points(*raw[0]).size(), 4u);
  EXPECT_EQ(points(*raw[1]).size(), 2u);
  EXPECT_EQ(points(*raw[2]).size(), 2u);
  EXPECT_EQ(loss.byClass("polyline", "train-ema").size(), 3u);
  // The axis spans the finite values, 1 and 10: the largest sits on the top
  // edge (inf did not stretch it) and no point is drawn outside.
  Area area = plotArea(loss);
  EXPECT_NEAR(points(*raw[2]).back().second, area.y, 0.05);
  for (const Element *line : raw)
    for (auto [px, py] : points(*line))
      EXPECT_TRUE(py >= area.y - 0.05 && py <= area.y + area.height + 0.05);
  EXPECT_EQ(file.find("nan"), std::string::npos);
  EXPECT_EQ(file.find("inf"), std::string::npos);
}

TEST_F(Plot, EscapesTitleAndLabels) {
  std::string title = "a&b<c>.onnx \"q\" 'r'";
  PlotRun run = decayingRun("f16 <O2> & \"dyn\"", 20, 0, false);
  PlotRun odd =
      decayingRun(std::string("bad \x01 byte \xff end \xE2\x82"), 20, 0, false);
  plot({run, odd}, title);
  auto titles = root.all([](const Element &e) { return e.name == "title"; });
  ASSERT_EQ(titles.size(), 1u);
  EXPECT_EQ(titles[0]->text, title);
  auto legend = root.byClass("g", "legend");
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_EQ(legend[0]->firstText(), "f16 <O2> & \"dyn\"");
  // Control and broken bytes become U+FFFD; the rest stays.
  EXPECT_EQ(legend[1]->firstText(),
            "bad \xEF\xBF\xBD byte \xEF\xBF\xBD end \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(file.find("<c>"), std::string::npos);
}

TEST_F(Plot, ExtremesSpanThePlotArea) {
  PlotRun run;
  run.label = "r";
  for (int i = 0; i <= 50; ++i) {
    run.step.push_back(100 + i);
    run.trainLoss.push_back(i == 20 ? 5.0 : i == 35 ? 0.25 : 1.0);
  }
  plot({run});
  Area area = plotArea(panel("loss-panel"));
  auto raw = panel("loss-panel").byClass("polyline", "train-raw");
  ASSERT_EQ(raw.size(), 1u);
  auto pts = points(*raw[0]);
  ASSERT_EQ(pts.size(), 51u);
  EXPECT_NEAR(pts[20].second, area.y, 0.05);               // max on top
  EXPECT_NEAR(pts[35].second, area.y + area.height, 0.05); // min at bottom
  EXPECT_NEAR(pts[0].first, area.x, 0.05);                 // first step left
  EXPECT_NEAR(pts[50].first, area.x + area.width, 0.05);   // last step right
  // Linear in between: 1.0 sits at (5 - 1) / (5 - 0.25) of the way down.
  EXPECT_NEAR(pts[0].second, area.y + area.height * 4 / 4.75, 0.06);
}

TEST_F(Plot, TestLossCountsTowardsTheRange) {
  PlotRun run = decayingRun("r", 100, 0, false);
  run.evalStep = {49, 99};
  run.testLoss = {9.0, 0.1};
  plot({run});
  Area area = plotArea(panel("loss-panel"));
  auto markers = panel("loss-panel").byClass("circle", "test-loss-marker");
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_NEAR(std::stod(markers[0]->attr("cy")), area.y, 0.05);
  EXPECT_NEAR(std::stod(markers[1]->attr("cy")), area.y + area.height, 0.05);
}

TEST_F(Plot, DecimatesLongRuns) {
  const size_t kSteps = 100000;
  PlotRun noisy = decayingRun("amp", kSteps, 0.2, true);
  // A single spike must survive decimation.
  noisy.trainLoss[54321] = 50;
  PlotRun gappy = decayingRun("f32", kSteps, 0.2, false);
  for (size_t i = 0; i < kSteps; i += 7)
    gappy.trainLoss[i] = kNaN;
  plot({noisy, gappy});
  EXPECT_LT(file.size(), 600u * 1024) << "bytes";
  const Element &loss = panel("loss-panel");
  // Points and lines of one series of one run (told apart by colour).
  auto count = [&](const char *cls, const std::string &stroke) {
    size_t pointCount = 0, lineCount = 0;
    for (const Element *e : loss.byClass("polyline", cls)) {
      if (e->attr("stroke") != stroke)
        continue;
      pointCount += points(*e).size();
      ++lineCount;
    }
    return std::make_pair(pointCount, lineCount);
  };
  auto raw = loss.byClass("polyline", "train-raw");
  ASSERT_GE(raw.size(), 2u);
  std::string noisyColour = raw[0]->attr("stroke");
  std::string gappyColour = raw.back()->attr("stroke");
  ASSERT_NE(noisyColour, gappyColour);
  // The finite run: one unbroken line per series, at most two points per
  // pixel column, and not much fewer.
  for (const char *cls : {"train-raw", "train-ema"}) {
    auto [pointCount, lineCount] = count(cls, noisyColour);
    EXPECT_EQ(lineCount, 1u) << cls;
    EXPECT_LE(pointCount, 2000u) << cls;
    EXPECT_GE(pointCount, 1000u) << cls;
  }
  // The spike is the top of the axis and a point of the line.
  Area area = plotArea(loss);
  double top = area.y + area.height;
  for (auto [px, py] : points(*raw[0]))
    top = std::min(top, py);
  EXPECT_NEAR(top, area.y, 0.05);
  // The gappy run: at most one break per column, so a bounded count of
  // lines and points.
  for (const char *cls : {"train-raw", "train-ema"}) {
    auto [pointCount, lineCount] = count(cls, gappyColour);
    EXPECT_GT(lineCount, 100u) << cls;
    EXPECT_LE(lineCount, 1000u) << cls;
    EXPECT_LE(pointCount, 4000u) << cls;
  }
  // A constant scale over 100k steps is one segment of two points.
  auto scale = panel("scale-panel").byClass("polyline", "loss-scale");
  ASSERT_EQ(scale.size(), 1u);
  EXPECT_EQ(points(*scale[0]).size(), 2u);
}

//===----------------------------------------------------------------------===//
// Degenerate input
//===----------------------------------------------------------------------===//

TEST_F(Plot, SingleStepIsADot) {
  PlotRun run;
  run.label = "one";
  run.step = {0};
  run.trainLoss = {2.3};
  plot({run});
  const Element &loss = panel("loss-panel");
  EXPECT_TRUE(loss.byClass("polyline", "train-raw").empty());
  auto dots = loss.byClass("circle", "train-raw");
  ASSERT_EQ(dots.size(), 1u);
  Area area = plotArea(loss);
  double cx = std::stod(dots[0]->attr("cx")),
         cy = std::stod(dots[0]->attr("cy"));
  EXPECT_TRUE(cx > area.x && cx < area.x + area.width);
  EXPECT_TRUE(cy > area.y && cy < area.y + area.height);
  EXPECT_NE(panel("accuracy-panel").allText().find("no evaluations"),
            std::string::npos);
  EXPECT_NE(panel("scale-panel").allText().find("no loss scaling"),
            std::string::npos);
}

TEST_F(Plot, ConstantSeriesAndScale) {
  PlotRun run;
  run.label = "flat";
  for (int i = 0; i < 30; ++i) {
    run.step.push_back(i);
    run.trainLoss.push_back(1.0);
    run.lossScale.push_back(1024);
  }
  run.evalStep = {29};
  run.testAccuracy = {1.0};
  plot({run});
  Area area = plotArea(panel("loss-panel"));
  auto raw = panel("loss-panel").byClass("polyline", "train-raw");
  ASSERT_EQ(raw.size(), 1u);
  for (auto [px, py] : points(*raw[0]))
    EXPECT_NEAR(py, area.y + area.height / 2, 0.05);
  // 100% accuracy fits inside the panel.
  Area accuracyArea = plotArea(panel("accuracy-panel"));
  auto marker = panel("accuracy-panel").byClass("circle", "accuracy-marker");
  ASSERT_EQ(marker.size(), 1u);
  EXPECT_NEAR(std::stod(marker[0]->attr("cy")), accuracyArea.y, 0.05);
  EXPECT_EQ(panel("accuracy-panel").allText().find("no evaluations"),
            std::string::npos);
  auto scale = panel("scale-panel").byClass("polyline", "loss-scale");
  ASSERT_EQ(scale.size(), 1u);
  EXPECT_NE(panel("scale-panel").allText().find("2\xC2\xB9\xE2\x81\xB0"),
            std::string::npos); // 2^10 is a tick label
}

TEST_F(Plot, RunsOfDifferentLengthsShareTheStepAxis) {
  PlotRun longer = decayingRun("long", 101, 0, false);
  PlotRun shorter = decayingRun("short", 41, 0, false);
  plot({longer, shorter});
  Area area = plotArea(panel("loss-panel"));
  auto raw = panel("loss-panel").byClass("polyline", "train-raw");
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_NEAR(points(*raw[0]).back().first, area.x + area.width, 0.05);
  EXPECT_NEAR(points(*raw[1]).back().first, area.x + area.width * 0.4, 0.05);
}

TEST_F(Plot, LossScaleStaircaseAndSkippedSteps) {
  PlotRun run = decayingRun("amp", 100, 0, true);
  for (size_t i = 40; i < 100; ++i)
    run.lossScale[i] = 32768;
  run.trainLoss[40] = kNaN;
  run.skippedSteps = {40};
  plot({run});
  const Element &scale = panel("scale-panel");
  Area area = plotArea(scale);
  auto lines = scale.byClass("polyline", "loss-scale");
  ASSERT_EQ(lines.size(), 1u);
  auto pts = points(*lines[0]);
  // 2^16 from step 0 to 39, down a stair at 40, 2^15 to step 99.
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_NEAR(pts[1].second, pts[0].second, 0.05);
  EXPECT_NEAR(pts[2].first, pts[1].first + (pts[4].first - pts[0].first) / 99,
              0.05);
  EXPECT_NEAR(pts[2].second, pts[1].second, 0.05);
  EXPECT_NEAR(pts[3].first, pts[2].first, 0.05);
  EXPECT_GT(pts[3].second, pts[2].second); // lower scale, lower on the page
  EXPECT_TRUE(pts[0].second > area.y && pts[3].second < area.y + area.height);
  auto skipped = scale.byClass("path", "skipped");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]->attr("d").find("M" +
                                       [&] {
                                         char buf[32];
                                         std::snprintf(
                                             buf, sizeof buf, "%g",
                                             std::round(pts[2].first));
                                         return std::string(buf);
                                       }()),
            0u);
  std::string labels = scale.allText();
  EXPECT_NE(labels.find("2\xC2\xB9\xE2\x81\xB6"), std::string::npos); // 2^16
  EXPECT_NE(labels.find("2\xC2\xB9\xE2\x81\xB5"), std::string::npos); // 2^15
}

//===----------------------------------------------------------------------===//
// Ticks
//===----------------------------------------------------------------------===//

// The y tick labels of a panel: its text elements right-aligned left of the
// plot area.
std::vector<double> yTickValues(const Element &panel) {
  std::vector<double> values;
  for (const Element *t : panel.all([](const Element &e) {
         return e.name == "text" && e.attr("text-anchor") == "end";
       }))
    values.push_back(std::stod(t->text));
  return values;
}

bool isNiceStep(double step) {
  double mag = std::pow(10, std::floor(std::log10(step) + 1e-9));
  double n = step / mag;
  return std::fabs(n - 1) < 1e-6 || std::fabs(n - 2) < 1e-6 ||
         std::fabs(n - 5) < 1e-6;
}

TEST_F(Plot, NiceTicks) {
  PlotRun run = decayingRun("r", 2800, 0.05, false);
  run.evalStep = {933, 1866, 2799};
  run.testAccuracy = {0.81, 0.853, 0.868};
  plot({run});
  // Step labels under the bottom panel: multiples of 500.
  std::vector<std::string> xLabels;
  for (const Element *t : root.all([](const Element &e) {
         return e.name == "text" && e.attr("text-anchor") == "middle" &&
                e.attr("font-size") == "11";
       }))
    xLabels.push_back(t->text);
  EXPECT_EQ(xLabels, (std::vector<std::string>{"0", "500", "1000", "1500",
                                               "2000", "2500"}));
  for (const char *id : {"loss-panel", "accuracy-panel"}) {
    std::vector<double> ys = yTickValues(panel(id));
    ASSERT_GE(ys.size(), 3u) << id;
    ASSERT_LE(ys.size(), 11u) << id;
    double step = ys[1] - ys[0];
    EXPECT_TRUE(isNiceStep(step)) << id << " step " << step;
    for (size_t i = 1; i < ys.size(); ++i)
      EXPECT_NEAR(ys[i] - ys[i - 1], step, step * 1e-6) << id;
    EXPECT_NEAR(std::remainder(ys[0], step), 0, step * 1e-6) << id;
  }
  // Accuracy 81..86.8% is widened to whole ticks around it.
  std::vector<double> acc = yTickValues(panel("accuracy-panel"));
  EXPECT_LE(acc.front(), 81);
  EXPECT_GE(acc.back(), 86.8);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(Plot, Errors) {
  std::string out = dir + "/bad.svg";
  auto message = [&](const std::vector<PlotRun> &runs) {
    ampc::rt::Status s = writeTrainingPlot(out, "t", runs);
    EXPECT_FALSE(s.isOk());
    EXPECT_FALSE(std::filesystem::exists(out));
    return s.message();
  };
  EXPECT_EQ(message({}), "plot " + out + ": no runs to plot");

  PlotRun ok = decayingRun("f32", 3, 0, false);
  PlotRun run = decayingRun("f16", 3, 0, false);
  run.trainLoss.pop_back();
  EXPECT_EQ(message({ok, run}),
            "plot " + out +
                ": run 2 ('f16'): step has 3 values but trainLoss has 2");

  run = decayingRun("", 3, 0, true);
  run.lossScale.pop_back();
  EXPECT_EQ(message({run}), "plot " + out +
                                ": run 1: step has 3 values but lossScale "
                                "has 2 (it must be empty or as long)");

  run = decayingRun("amp", 3, 0, false);
  run.evalStep = {1, 2};
  run.testAccuracy = {0.5};
  EXPECT_NE(message({run}).find("run 1 ('amp'): evalStep has 2 values but "
                                "testAccuracy has 1"),
            std::string::npos);
  run.testAccuracy.clear();
  run.testLoss = {1, 2, 3};
  EXPECT_NE(message({run}).find("evalStep has 2 values but testLoss has 3"),
            std::string::npos);

  run = decayingRun("amp", 3, 0, false);
  run.step[1] = kNaN;
  EXPECT_NE(message({run}).find("run 1 ('amp'): step[1] is not finite"),
            std::string::npos);

  // An unwritable path is the writer's error, naming the file.
  out = dir + "/missing/plot.svg";
  EXPECT_NE(message({ok}).find(out), std::string::npos);
}

} // namespace
