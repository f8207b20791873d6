// The typed-value commands' rows (docs/redis-locks.md, "Typed values"): counters, sorted sets,
// hashes and lists, and TYPE, SETNX, GETSET, GETDEL. Each row's call parses the arguments as
// Redis 7.0 does, in its order and with its words (a bad flag, number or pair count is refused
// before the key is looked at), into a ValueRequest for LockService::value(); one writer
// renders every answer (value_reply_writer.cc). commands.cc puts these rows after its own.
#pragma once

#include "server/resp/commands.h"

namespace holdfast::resp {

namespace value_cmd {
// A request on the command's key (its first argument) with its other arguments as items.
inline ValueRequest request(ValueOp op, const CallArgs& a) {
  ValueRequest r;
  r.op = op;
  r.key = a.positional[0];
  r.items = a.positional.subspan(1);
  return r;
}
}  // namespace value_cmd

// The rows whose arguments need no reading beyond the table's arity.
template <ValueOp op>
Issued call_plain(LockService& service, const Caller& caller, const CallArgs& a, Completion& done) {
  return service.value(caller, value_cmd::request(op, a), done);
}

// value_commands_counter.cc
Issued call_incr(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_incrby(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_decr(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_decrby(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_setnx(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_getset(LockService&, const Caller&, const CallArgs&, Completion&);
void write_setnx(ReplyWriter&, Answer&);
// value_commands_zset.cc
Issued call_zadd(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zincrby(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zrevrank(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zcount(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zrange(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zrangebyscore(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zremrangebyscore(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_zremrangebyrank(LockService&, const Caller&, const CallArgs&, Completion&);
// value_commands_hash.cc
Issued call_hset(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_hincrby(LockService&, const Caller&, const CallArgs&, Completion&);
// value_commands_list.cc
Issued call_lpush(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rpush(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_lpop(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_rpop(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_lrange(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_lrem(LockService&, const Caller&, const CallArgs&, Completion&);
Issued call_lindex(LockService&, const Caller&, const CallArgs&, Completion&);
// value_reply_writer.cc: every ValueReply, in the connection's protocol.
void write_value(ReplyWriter&, const ValueReply&);
void write_value_answer(ReplyWriter&, Answer&);

// Every row takes its arguments positionally and answers bad input in Redis's words.
inline constexpr std::uint32_t kValueRead = kReadOnly | kKeyed | kRedisErrors;
inline constexpr std::uint32_t kValueWrite = kWrite | kKeyed | kRedisErrors;

// One row a command, as in Redis's command table.
// clang-format off
inline constexpr CommandSpec kValueCommands[] = {
    // Counters, and the string commands lock libraries use.
    {"INCR", 1, 1, kValueWrite, -1, {}, nullptr, call_incr, write_value_answer,
     "INCR <key>",
     "Adds 1 to the key's counter (a missing key counts from 0); answers the new value.", "string"},
    {"INCRBY", 2, 2, kValueWrite, -1, {}, nullptr, call_incrby, write_value_answer,
     "INCRBY <key> <increment>",
     "Adds the increment to the key's counter; answers the new value.", "string"},
    {"DECR", 1, 1, kValueWrite, -1, {}, nullptr, call_decr, write_value_answer,
     "DECR <key>",
     "Subtracts 1 from the key's counter; answers the new value.", "string"},
    {"DECRBY", 2, 2, kValueWrite, -1, {}, nullptr, call_decrby, write_value_answer,
     "DECRBY <key> <decrement>",
     "Subtracts the decrement from the key's counter; answers the new value.", "string"},
    {"SETNX", 2, 2, kValueWrite, -1, {}, nullptr, call_setnx, write_setnx,
     "SETNX <key> <value>",
     "SET NX as Redis's older command: takes a free key as a lock; 1 when it did, else 0.",
     "string"},
    {"GETSET", 2, 2, kValueWrite, -1, {}, nullptr, call_getset, write_set,
     "GETSET <key> <value>",
     "SET ... GET: sets the lock's value and answers the value it had (nil: free).", "string"},
    {"GETDEL", 1, 1, kValueWrite, -1, {}, nullptr, call_plain<ValueOp::kGetDel>, write_value_answer,
     "GETDEL <key>",
     "Answers the key's value (a lock's or a counter's) and deletes it, as GET then DEL.",
     "string"},
    {"TYPE", 1, 1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kType>, write_value_answer,
     "TYPE <key>",
     "What the key holds: string (a lock or a counter), zset, hash, list, or none.", "generic"},
    // Sorted sets.
    {"ZADD", 3, -1, kValueWrite, -1, {}, nullptr, call_zadd, write_value_answer,
     "ZADD <key> [NX|XX] [GT|LT] [CH] [INCR] <score> <member> [<score> <member>...]",
     "Adds members with scores, or moves them; answers how many were added (CH: changed).",
     "sorted_set"},
    {"ZINCRBY", 3, 3, kValueWrite, -1, {}, nullptr, call_zincrby, write_value_answer,
     "ZINCRBY <key> <increment> <member>",
     "Adds the increment to the member's score; answers the new score.", "sorted_set"},
    {"ZREM", 2, -1, kValueWrite, -1, {}, nullptr, call_plain<ValueOp::kZRem>, write_value_answer,
     "ZREM <key> <member>...",
     "Removes members; answers how many were there.", "sorted_set"},
    {"ZCARD", 1, 1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kZCard>, write_value_answer,
     "ZCARD <key>",
     "How many members the sorted set has.", "sorted_set"},
    {"ZSCORE", 2, 2, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kZScore>, write_value_answer,
     "ZSCORE <key> <member>",
     "The member's score, or nil.", "sorted_set"},
    {"ZRANK", 2, 2, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kZRank>, write_value_answer,
     "ZRANK <key> <member>",
     "The member's rank from the lowest score (0 first), or nil.", "sorted_set"},
    {"ZREVRANK", 2, 2, kValueRead, -1, {}, nullptr, call_zrevrank, write_value_answer,
     "ZREVRANK <key> <member>",
     "The member's rank from the highest score (0 first), or nil.", "sorted_set"},
    {"ZCOUNT", 3, 3, kValueRead, -1, {}, nullptr, call_zcount, write_value_answer,
     "ZCOUNT <key> <min> <max>",
     "How many members have a score between min and max (\"(\" excludes, -inf/+inf).",
     "sorted_set"},
    {"ZRANGE", 3, -1, kValueRead, -1, {}, nullptr, call_zrange, write_value_answer,
     "ZRANGE <key> <start> <stop> [BYSCORE] [REV] [LIMIT <offset> <count>] [WITHSCORES]",
     "Members by rank, or by score with BYSCORE, lowest first (REV: highest first).",
     "sorted_set"},
    {"ZRANGEBYSCORE", 3, -1, kValueRead, -1, {}, nullptr, call_zrangebyscore, write_value_answer,
     "ZRANGEBYSCORE <key> <min> <max> [WITHSCORES] [LIMIT <offset> <count>]",
     "Members with a score between min and max, lowest first.", "sorted_set"},
    {"ZREMRANGEBYSCORE", 3, 3, kValueWrite, -1, {}, nullptr, call_zremrangebyscore,
     write_value_answer,
     "ZREMRANGEBYSCORE <key> <min> <max>",
     "Removes the members with a score between min and max; answers how many.", "sorted_set"},
    {"ZREMRANGEBYRANK", 3, 3, kValueWrite, -1, {}, nullptr, call_zremrangebyrank,
     write_value_answer,
     "ZREMRANGEBYRANK <key> <start> <stop>",
     "Removes the members ranked start to stop; answers how many.", "sorted_set"},
    // Hashes.
    {"HSET", 3, -1, kValueWrite, -1, {}, nullptr, call_hset, write_value_answer,
     "HSET <key> <field> <value> [<field> <value>...]",
     "Sets fields; answers how many were new.", "hash"},
    {"HGET", 2, 2, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kHGet>, write_value_answer,
     "HGET <key> <field>",
     "The field's value, or nil.", "hash"},
    {"HMGET", 2, -1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kHMGet>, write_value_answer,
     "HMGET <key> <field>...",
     "The fields' values (nil for a missing one).", "hash"},
    {"HDEL", 2, -1, kValueWrite, -1, {}, nullptr, call_plain<ValueOp::kHDel>, write_value_answer,
     "HDEL <key> <field>...",
     "Removes fields; answers how many were there.", "hash"},
    {"HEXISTS", 2, 2, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kHExists>, write_value_answer,
     "HEXISTS <key> <field>",
     "1 when the field is there, else 0.", "hash"},
    {"HINCRBY", 3, 3, kValueWrite, -1, {}, nullptr, call_hincrby, write_value_answer,
     "HINCRBY <key> <field> <increment>",
     "Adds the increment to the field's integer (a missing field counts from 0).", "hash"},
    {"HGETALL", 1, 1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kHGetAll>, write_value_answer,
     "HGETALL <key>",
     "Every field and its value (a map).", "hash"},
    {"HLEN", 1, 1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kHLen>, write_value_answer,
     "HLEN <key>",
     "How many fields the hash has.", "hash"},
    // Lists.
    {"LPUSH", 2, -1, kValueWrite, -1, {}, nullptr, call_lpush, write_value_answer,
     "LPUSH <key> <element>...",
     "Pushes elements at the head, one after another; answers the new length.", "list"},
    {"RPUSH", 2, -1, kValueWrite, -1, {}, nullptr, call_rpush, write_value_answer,
     "RPUSH <key> <element>...",
     "Pushes elements at the tail; answers the new length.", "list"},
    {"LPOP", 1, 2, kValueWrite, -1, {}, nullptr, call_lpop, write_value_answer,
     "LPOP <key> [<count>]",
     "Removes and answers the head element (with a count, up to that many).", "list"},
    {"RPOP", 1, 2, kValueWrite, -1, {}, nullptr, call_rpop, write_value_answer,
     "RPOP <key> [<count>]",
     "Removes and answers the tail element (with a count, up to that many).", "list"},
    {"LRANGE", 3, 3, kValueRead, -1, {}, nullptr, call_lrange, write_value_answer,
     "LRANGE <key> <start> <stop>",
     "The elements from start to stop (negative: from the tail).", "list"},
    {"LLEN", 1, 1, kValueRead, -1, {}, nullptr, call_plain<ValueOp::kLLen>, write_value_answer,
     "LLEN <key>",
     "How many elements the list has.", "list"},
    {"LREM", 3, 3, kValueWrite, -1, {}, nullptr, call_lrem, write_value_answer,
     "LREM <key> <count> <element>",
     "Removes elements equal to element (count > 0 from the head, < 0 from the tail, 0 all).",
     "list"},
    {"LINDEX", 2, 2, kValueRead, -1, {}, nullptr, call_lindex, write_value_answer,
     "LINDEX <key> <index>",
     "The element at index (negative: from the tail), or nil.", "list"},
};
// clang-format on

}  // namespace holdfast::resp
