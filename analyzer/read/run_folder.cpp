#include "read/run_folder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace prof {
namespace {

bool is_folder(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_profile_name(const char *name) {
  // (A stream's ring file, ring_file.h, is read with the stream.)
  const size_t n = strlen(name);
  if (n >= 5 && strcmp(name + n - 5, ".ring") == 0) return false;
  return strstr(name, ".memprof") != nullptr || strstr(name, ".sysprof") != nullptr;
}

// The stream a ring file (`<stream>.ring`, ring_file.h) belongs to, or
// path itself when it names none.
std::string stream_of(const std::string &path) {
  const size_t n = path.size();
  if (n <= 5 || path.compare(n - 5, 5, ".ring") != 0) return path;
  const std::string stream = path.substr(0, n - 5);
  return is_profile_name(stream.substr(stream.rfind('/') + 1).c_str()) ? stream : path;
}

}  // namespace

std::vector<std::string> profiles_in_folder(const std::string &folder) {
  DIR *d = opendir(folder.c_str());
  if (!d) throw std::runtime_error(folder + ": cannot read the folder: " + strerror(errno));
  std::vector<std::string> files;
  const std::string prefix = folder.empty() || folder.back() == '/' ? folder : folder + "/";
  while (const dirent *e = readdir(d)) {
    if (!is_profile_name(e->d_name)) continue;
    const std::string path = prefix + e->d_name;
    if (!is_folder(path)) files.push_back(path);
  }
  closedir(d);
  if (files.empty())
    throw std::runtime_error(folder + ": no profile in this folder (files named *.memprof* or "
                                      "*.sysprof*, as prof-run and PROF_OUTPUT write them)");
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> expand_run_folders(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    if (!is_folder(path)) {
      // (A killed process's ring file, which a glob such as p.* names
      // beside its stream, is read with that stream: once.)
      const std::string file = stream_of(path);
      if (file == path || std::find(files.begin(), files.end(), file) == files.end())
        files.push_back(file);
      continue;
    }
    const std::vector<std::string> in = profiles_in_folder(path);
    files.insert(files.end(), in.begin(), in.end());
  }
  return files;
}

}  // namespace prof
