holdfast_fuzzer(resp_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/resp_fuzz.cc)
target_link_libraries(resp_fuzz PRIVATE holdfast_resp_codec)
