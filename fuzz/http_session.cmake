# HTTP session: real sessions on an io_context, fed over socket pairs in arbitrary pieces, with
# pipelining behind blocked acquires, slow readers, responses held back for the store, hang-ups.
holdfast_fuzzer(http_session_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_session_fuzz.cc)
target_link_libraries(http_session_fuzz PRIVATE holdfast_connections)
