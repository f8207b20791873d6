# HTTP: requests from two callers through the route table and the call runner to the policy
# over an embedded backend over a memory store, with a fake clock; every response must be
# well-formed JSON.
holdfast_fuzzer(http_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/http_fuzz.cc)
target_link_libraries(http_fuzz PRIVATE holdfast_frontends holdfast_embedded)
