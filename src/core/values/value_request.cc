#include "core/values/value_request.h"

namespace holdfast {

bool value_op_writes(ValueOp op) {
  switch (op) {
    case ValueOp::kIncrBy:
    case ValueOp::kZAdd:
    case ValueOp::kZIncrBy:
    case ValueOp::kZRem:
    case ValueOp::kZRemRangeByScore:
    case ValueOp::kZRemRangeByRank:
    case ValueOp::kHSet:
    case ValueOp::kHDel:
    case ValueOp::kHIncrBy:
    case ValueOp::kPush:
    case ValueOp::kPop:
    case ValueOp::kLRem:
    case ValueOp::kGetDel:
      return true;
    case ValueOp::kZCard:
    case ValueOp::kZScore:
    case ValueOp::kZRank:
    case ValueOp::kZCount:
    case ValueOp::kZRange:
    case ValueOp::kHGet:
    case ValueOp::kHMGet:
    case ValueOp::kHExists:
    case ValueOp::kHGetAll:
    case ValueOp::kHLen:
    case ValueOp::kLRange:
    case ValueOp::kLLen:
    case ValueOp::kLIndex:
    case ValueOp::kType:
    case ValueOp::kPTtl:
      return false;
  }
  return true;
}

ValueRequestCopy::ValueRequestCopy(const ValueRequest& r)
    : key_(r.key),
      items_(r.items.begin(), r.items.end()),
      scores_(r.scores.begin(), r.scores.end()),
      request_(r) {
  views_.assign(items_.begin(), items_.end());
  request_.key = key_;
  request_.items = views_;
  request_.scores = scores_;
}

}  // namespace holdfast
