# CEL: compile arbitrary input and, when it compiles, evaluate it against a few bindings.
holdfast_fuzzer(cel_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/cel_fuzz.cc)
target_link_libraries(cel_fuzz PRIVATE holdfast_cel)
