// The sandbox: what a script finds in its globals, as Redis gives it.
//
//  - The base, table, string and math libraries. Not io, os, package or debug; from the base
//    library not dofile, loadfile, load (it reads chunks through a function, binary ones too),
//    getfenv and setfenv (they would reach the tables behind the read-only ones), and not
//    string.dump. print does nothing (the server's stdout is not the script's). loadstring
//    refuses binary chunks (Lua 5.1 would load bytecode, which it does not verify). tonumber
//    reads a plain decimal string without strtod and is Lua's own for anything else (the same
//    numbers either way).
//  - The globals are read-only, as in Redis 7: reading a global that does not exist raises
//    "Script attempted to access nonexistent global variable", creating one "Script attempted
//    to create global variable", changing one (or a field of string, table, math, coroutine or
//    redis) "Attempt to modify a readonly table". Scripts keep their state in locals. Each of
//    those tables is an empty proxy in front of the real one; what a script stores in a proxy
//    anyway (rawset, table.insert) lives until the script ends: reset() empties the proxies.
//  - KEYS and ARGV hold each script's own keys and arguments (set_keys_and_args()). The two
//    tables are refilled rather than made anew, unless the last script changed them beyond
//    their elements (a field, a metatable, an element past the end): then they are replaced.
// One state serves every script and every caller, so nothing a script does may outlive it.
#pragma once

#include <span>
#include <string_view>

struct lua_State;

namespace holdfast::script {

// The sandbox's tables, by their references in the registry (a lookup by number, where a
// name would be hashed for every script).
struct Sandbox {
  int globals = 0;  // the real globals, behind the read-only _G
  int proxies = 0;  // the array of read-only proxies, which reset_sandbox() empties
  // KEYS and ARGV, and how many elements the last script found in each.
  struct Array {
    const char* name = nullptr;
    int ref = 0;
    int size = 0;
  };
  Array keys{"KEYS"};
  Array args{"ARGV"};
};

// Opens the libraries and builds the read-only globals, with `redis` (redis_lib.h).
// Once, on a fresh state of a LuaRuntime, before any script.
Sandbox install_sandbox(lua_State* L);

// KEYS and ARGV for the next script, as arrays of strings.
void set_keys_and_args(lua_State* L, Sandbox& sandbox, std::span<const std::string_view> keys,
                       std::span<const std::string_view> args);

// After a script: drops what it left in the read-only tables, turns the collector back on if
// it stopped it, and collects when the state holds more than `collect_above` bytes.
void reset_sandbox(lua_State* L, const Sandbox& sandbox, std::size_t collect_above);

}  // namespace holdfast::script
