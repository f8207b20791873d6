# HTTP session: real sessions on an io_context, fed over socket pairs in arbitrary pieces, with
# pipelining behind blocked acquires, slow readers, responses held back for the store, hang-ups.
holdfast_fuzzer(http_session_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_session_fuzz.cc)
target_link_libraries(http_session_fuzz PRIVATE holdfast_connections holdfast_embedded)
# The same with a service whose every call takes effect later, when the fuzzer says, in any
# order, as on a PostgreSQL node.
holdfast_fuzzer(http_session_offload_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_session_fuzz.cc)
target_link_libraries(http_session_offload_fuzz PRIVATE holdfast_connections holdfast_embedded)
target_compile_definitions(http_session_offload_fuzz PRIVATE HOLDFAST_FUZZ_OFFLOAD)
