# The client's reply framing and parsing (src/client/resp_codec.cc) take no other part of the
# client library, so the source is compiled in directly.
holdfast_fuzzer(client_reply_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/client_reply_fuzz.cc
                ${PROJECT_SOURCE_DIR}/src/client/resp_codec.cc)
target_include_directories(client_reply_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_compile_features(client_reply_fuzz PRIVATE cxx_std_20)
