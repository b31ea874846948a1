// The project `tessera new NAME` writes: its files' names and text, separate from the command that
// writes them so that tests can read what a user gets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::tools {

struct ScaffoldFile {
  std::string path;  // relative to the project's folder
  std::string text;
};

// The files of a new project called `name` (a valid CMake project and target name: a letter, then
// letters, digits, '_' or '-'; new_project checks it). `prefix`: the folder Tessera is installed
// in, written into the README's configure command; empty when not known (the README then says
// where to put it).
std::vector<ScaffoldFile> scaffold_files(std::string_view name, std::string_view prefix);

}  // namespace tessera::tools
