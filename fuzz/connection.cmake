# Connection: real RESP connections on an io_context, fed over Unix socket pairs in arbitrary
# pieces, with slow readers, replies held back for the store and clients that hang up.
holdfast_fuzzer(connection_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/connection_fuzz.cc)
target_link_libraries(connection_fuzz PRIVATE holdfast_connections holdfast_embedded)
# The same with a service whose every call takes effect later, when the fuzzer says, in any
# order, as on a PostgreSQL node.
holdfast_fuzzer(connection_offload_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/connection_fuzz.cc)
target_link_libraries(connection_offload_fuzz PRIVATE holdfast_connections holdfast_embedded)
target_compile_definitions(connection_offload_fuzz PRIVATE HOLDFAST_FUZZ_OFFLOAD)
