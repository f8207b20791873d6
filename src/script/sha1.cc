#include "script/sha1.h"

#include <openssl/evp.h>

#include "core/text.h"

namespace holdfast::script {

std::string sha1_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // One-shot digest: allocates nothing the caller sees; SHA-1 is always available in libcrypto.
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha1(), nullptr);
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

}  // namespace holdfast::script
