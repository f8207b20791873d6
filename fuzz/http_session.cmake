# HTTP session: real sessions on an io_context, fed over socket pairs in arbitrary pieces, with
# pipelining behind blocked acquires, slow readers, responses held back for the store, hang-ups.
holdfast_fuzzer(http_session_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_session_fuzz.cc)
target_link_libraries(http_session_fuzz PRIVATE holdfast_connections)
# The same with a blocking service: every request on the offload executor, whose calls the
# fuzzer runs in any order, as on a PostgreSQL node.
holdfast_fuzzer(http_session_offload_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_session_fuzz.cc)
target_link_libraries(http_session_offload_fuzz PRIVATE holdfast_connections)
target_compile_definitions(http_session_offload_fuzz PRIVATE HOLDFAST_FUZZ_OFFLOAD)
