# Commands: a RESP stream from three connections through the command pipeline (the command
# table and the call runner) to the policy over an embedded backend, with a fake clock; the
# second form of its first byte's bit 3 makes every call take effect later, in any order.
holdfast_fuzzer(commands_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/commands_fuzz.cc)
target_link_libraries(commands_fuzz PRIVATE holdfast_frontends holdfast_embedded)
