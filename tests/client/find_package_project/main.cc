// Compiles against the installed headers and links the installed library; exits 0 when the
// client behaves: a key template, and a clear ConnectionError for a server that is not there.
#include <holdfast/client.h>

#include <iostream>

int main() {
  if (holdfast::format_key("import:{}", 42) != "import:42") return 1;
  holdfast::Client client("127.0.0.1:1", {.connect_timeout = std::chrono::milliseconds(500)});
  try {
    client.status("k");
  } catch (const holdfast::ConnectionError& e) {
    std::cout << "consumer ok: " << e.code() << "\n";
    return 0;
  }
  return 2;
}
