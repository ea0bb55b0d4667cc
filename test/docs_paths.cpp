// The documentation names nothing that is not there: every source path the
// README and the pages under docs/ (and format/README.md) mention exists,
// every relative link reaches a file and, with an anchor, one of its
// headings, and every page under docs/ is linked from the README.
#include <glob.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = PROF_SOURCE_DIR;

std::string read_text(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> documents() {
  std::vector<fs::path> docs{kSource / "README.md", kSource / "format/README.md"};
  for (const auto &entry : fs::directory_iterator(kSource / "docs"))
    if (entry.path().extension() == ".md") docs.push_back(entry.path());
  return docs;
}

// Whether a path relative to the source tree names something; `*` globs.
bool source_exists(const std::string &path) {
  if (path.find('*') == std::string::npos) return fs::exists(kSource / path);
  glob_t g{};
  const bool found = glob((kSource / path).c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'.
std::string anchor_of(const std::string &heading) {
  std::string out;
  for (const unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_')
      out += char(std::tolower(c));
    else if (c == ' ')
      out += '-';
    else if (c >= 0x80)
      out += char(c);  // letters of other scripts stay
  }
  return out;
}

std::set<std::string> anchors_in(const fs::path &doc) {
  std::set<std::string> anchors;
  std::istringstream in(read_text(doc));
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    const size_t text = line.find_first_not_of('#');
    if (text != std::string::npos && line[text] == ' ')
      anchors.insert(anchor_of(line.substr(text + 1)));
  }
  return anchors;
}

}  // namespace

TEST_CASE("every source path the docs mention exists") {
  // A path starts a word with one of the tree's top folders; a path inside
  // another one (build/preload/libprof.so, P/lib/...) does not.
  const std::regex path_re(
      R"((?:^|[\s`("'])((?:preload|analyzer|format|unwind|scripts|test|docs)/[A-Za-z0-9_.*/+-]*))");
  for (const fs::path &doc : documents()) {
    const std::string text = read_text(doc);
    for (std::sregex_iterator it(text.begin(), text.end(), path_re), end; it != end; ++it) {
      std::string path = (*it)[1];
      while (!path.empty() && path.back() == '.') path.pop_back();
      INFO(doc.lexically_relative(kSource).string() << " names " << path);
      CHECK(source_exists(path));
    }
  }
}

TEST_CASE("every relative link of the docs reaches a file and its heading") {
  const std::regex link_re(R"(\]\(([^)\s]+)\))");
  for (const fs::path &doc : documents()) {
    const std::string text = read_text(doc);
    for (std::sregex_iterator it(text.begin(), text.end(), link_re), end; it != end; ++it) {
      const std::string link = (*it)[1];
      if (link.find("://") != std::string::npos || link.rfind("mailto:", 0) == 0) continue;
      const size_t hash = link.find('#');
      const std::string file = link.substr(0, hash);
      const fs::path target = file.empty() ? doc : doc.parent_path() / file;
      INFO(doc.lexically_relative(kSource).string() << " links " << link);
      REQUIRE(fs::exists(target));
      if (hash != std::string::npos && target.extension() == ".md")
        CHECK(anchors_in(target).count(link.substr(hash + 1)) == 1);
    }
  }
}

TEST_CASE("the README links every page under docs/") {
  const std::string readme = read_text(kSource / "README.md");
  for (const auto &entry : fs::directory_iterator(kSource / "docs")) {
    if (entry.path().extension() != ".md") continue;
    const std::string link = "](docs/" + entry.path().filename().string();
    INFO("README.md does not link docs/" << entry.path().filename().string());
    CHECK(readme.find(link) != std::string::npos);
  }
}
