/* cel-eval-stdin: reads one evaluator-protocol request on stdin and prints the reply
 * (see src/cel/json_eval.h). The conformance checker runs it once per case.
 */
#include <iostream>
#include <iterator>
#include <string>

#include "cel/json_eval.h"

int main() {
  std::string request((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::cout << holdfast::cel::eval_json_request(request) << '\n';
  return 0;
}
