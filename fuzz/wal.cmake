# WAL: read arbitrary log segments and snapshots, raw and inside correct checksums.
holdfast_fuzzer(wal_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/wal_fuzz.cc)
target_link_libraries(wal_fuzz PRIVATE holdfast_store)
