# Commands: a RESP stream from three connections through the command table to an embedded
# service over a memory store, with a fake clock.
holdfast_fuzzer(commands_fuzz ${CMAKE_CURRENT_SOURCE_DIR}/commands_fuzz.cc)
target_link_libraries(commands_fuzz PRIVATE holdfast_commands)
