# Rule sets: parse and compile arbitrary TOML, then decide every gated operation with it.
holdfast_fuzzer(rules_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/rules_fuzz.cc)
target_link_libraries(rules_fuzz PRIVATE holdfast_auth)
