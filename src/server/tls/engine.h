// Engine: the server side of one TLS session between a socket and a RESP connection, with the
// socket left to the connection. The connection reads ciphertext into input_space() (with the
// same ReadSpace, so a short read still means the socket is drained), the engine decrypts it
// into the connection's own input buffer, and encrypts a batch of replies with one SSL_write
// into output(), which the connection sends with its one write per batch, as on a plain socket.
//
// Why not Boost.Asio's ssl::stream, which the HTTP sessions use: its reads begin with a recv()
// that finds nothing on a request/response connection (the syscall ReadSpace exists to avoid),
// and its writes complete through a chain of handlers, so a reply could not leave straight from
// the loop (and its synchronous write_some cannot be used on a non-blocking socket: records it
// could not send would be lost). Here OpenSSL reads and writes through a BIO over the engine's
// two buffers (the records it writes are sent from where it wrote them; a record read is copied
// once into OpenSSL's own buffer, as with any BIO), and the socket I/O stays the connection's.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "server/tls/handshake_failure.h"

namespace holdfast::tls {

class Engine {
 public:
  enum class Status {
    kOk,         // done (handshake), or bytes were produced (read)
    kWantInput,  // needs more ciphertext from the socket
    kClosed,     // the peer ended the session (close_notify)
    kFailed,     // a protocol error: failure() says which; output() may hold an alert to send
  };

  explicit Engine(SSL_CTX* context);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Where the next socket read goes, and how many bytes it put there. Ciphertext not yet
  // decrypted stays at the front; the space is never empty while has_input() is false.
  char* input_space();
  std::size_t input_space_size() const { return kInputBytes - in_end_; }
  void received(std::size_t n);

  // Continues the handshake with what was received.
  Status handshake();
  bool established() const { return established_; }
  // Decrypts into [out, out + cap); *n is what it wrote (kOk only).
  // Returns kWantInput at once when no whole record is left.
  Status read(char* out, std::size_t cap, std::size_t* n);
  // A whole record received and not yet decrypted, or plaintext of a record read in part:
  // read() has more to give without another socket read.
  bool has_input() const { return in_begin_ < whole_end_ || SSL_pending(ssl_) > 0; }
  // Encrypts all of `plain` into output(). False on failure.
  bool write(std::string_view plain);

  // Writes close_notify into output(); false when the session cannot send it.
  bool shutdown();

  // Ciphertext to send: records, handshake messages, alerts.
  const std::string& output() const { return out_; }
  void clear_output() { out_.clear(); }

  // After kFailed: why, and OpenSSL's words for it.
  HandshakeFailure failure() const { return failure_; }
  const std::string& failure_text() const { return failure_text_; }
  SSL* native() { return ssl_; }

 private:
  static constexpr std::size_t kInputBytes = 32 * 1024;  // two full records
  friend struct EngineBio;

  Status fail(int ssl_error);
  // Moves whole_end_ past every complete record in [whole_end_, in_end_).
  void find_whole_records();

  SSL* ssl_ = nullptr;
  std::unique_ptr<char[]> in_;
  // [in_begin_, in_end_) is received ciphertext; once the handshake is done OpenSSL is given
  // only [in_begin_, whole_end_), whole records, so that read() stops when none is left instead
  // of asking OpenSSL, which would fail to find one (an SSL_read that finds nothing costs about
  // as much as one that decrypts).
  std::size_t in_begin_ = 0, whole_end_ = 0, in_end_ = 0;
  std::string out_;
  bool established_ = false;
  HandshakeFailure failure_ = HandshakeFailure::kOther;
  std::string failure_text_;
};

}  // namespace holdfast::tls
