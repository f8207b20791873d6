# Connection: real RESP connections on an io_context, fed over Unix socket pairs in arbitrary
# pieces, with slow readers, replies held back for the store and clients that hang up.
holdfast_fuzzer(connection_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/connection_fuzz.cc)
target_link_libraries(connection_fuzz PRIVATE holdfast_connections)
