// FakeFileSystem: a map from path to bytes under one mutex. Directory entries are implied by
// paths (a file "d/x" is an entry "x" of "d"); directory durability is not modelled, only the
// synced length of each file.
#include "store/wal/fake_file_system.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

namespace holdfast::wal {
namespace {

Error fake_error(std::string_view what, const std::string& path) {
  return Error(ErrorCode::kInternal, std::string(what) + " " + path).with("path", path);
}

}  // namespace

std::string FakeFileSystem::File::visible() const {
  std::string bytes = data;
  if (bytes.size() < reserved) bytes.resize(reserved, '\0');
  return bytes;
}

class FakeFileSystem::Writable final : public WritableFile {
 public:
  Writable(FakeFileSystem& fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  Status append(std::span<const std::string_view> pieces) override {
    if (closed_) return fake_error("write to closed file", path_);
    return fs_.append_to(path_, pieces);
  }
  Status sync() override {
    if (closed_) return fake_error("sync of closed file", path_);
    return fs_.sync_file(path_);
  }
  Status preallocate(std::uint64_t bytes) override {
    if (closed_) return fake_error("preallocate of closed file", path_);
    return fs_.reserve(path_, bytes, false);
  }
  Status truncate_to_appended() override {
    if (closed_) return fake_error("truncate of closed file", path_);
    return fs_.reserve(path_, 0, true);
  }
  Status close() override {
    closed_ = true;
    return ok_status();
  }

 private:
  FakeFileSystem& fs_;
  std::string path_;
  bool closed_ = false;
};

class FakeFileSystem::Lock final : public FileLock {
 public:
  Lock(FakeFileSystem& fs, std::string path) : fs_(fs), path_(std::move(path)) {}
  ~Lock() override { fs_.unlock(path_); }

 private:
  FakeFileSystem& fs_;
  std::string path_;
};

Status FakeFileSystem::create_dir(const std::string& dir) {
  std::lock_guard lock(mu_);
  dirs_.insert(dir);
  return ok_status();
}

Result<std::vector<std::string>> FakeFileSystem::list_dir(const std::string& dir) {
  std::lock_guard lock(mu_);
  if (!dirs_.contains(dir)) return fake_error("no such directory", dir);
  const std::string prefix = dir + "/";
  std::vector<std::string> names;
  for (const auto& [path, file] : files_) {
    if (path.starts_with(prefix) && path.find('/', prefix.size()) == std::string::npos)
      names.push_back(path.substr(prefix.size()));
  }
  return names;
}

Result<FileContents> FakeFileSystem::read_file(const std::string& path) {
  std::lock_guard lock(mu_);
  const auto it = files_.find(path);
  if (it == files_.end()) return fake_error("no such file", path);
  return FileContents(it->second.visible());
}

Result<std::unique_ptr<WritableFile>> FakeFileSystem::create_file(const std::string& path) {
  std::lock_guard lock(mu_);
  files_[path] = File{};
  return std::unique_ptr<WritableFile>(std::make_unique<Writable>(*this, path));
}

Status FakeFileSystem::truncate_file(const std::string& path, std::uint64_t size) {
  std::lock_guard lock(mu_);
  const auto it = files_.find(path);
  if (it == files_.end()) return fake_error("no such file", path);
  it->second.data = it->second.visible();
  it->second.data.resize(size);
  it->second.synced = size;
  it->second.reserved = 0;
  if (it->second.lost_from >= size) it->second.lost_from = std::string::npos;
  return ok_status();
}

Status FakeFileSystem::rename_file(const std::string& from, const std::string& to) {
  std::lock_guard lock(mu_);
  const auto it = files_.find(from);
  if (it == files_.end()) return fake_error("no such file", from);
  File moved = std::move(it->second);
  files_.erase(it);
  files_[to] = std::move(moved);
  return ok_status();
}

Status FakeFileSystem::remove_file(const std::string& path) {
  std::lock_guard lock(mu_);
  files_.erase(path);
  return ok_status();
}

Status FakeFileSystem::sync_dir(const std::string&) { return ok_status(); }

Result<LockAttempt> FakeFileSystem::lock_file(const std::string& path) {
  std::lock_guard lock(mu_);
  File& file = files_[path];
  if (locked_.contains(path)) {
    std::int64_t pid = 0;
    for (const char c : file.data)
      if (c >= '0' && c <= '9') pid = pid * 10 + (c - '0');
    return LockAttempt{nullptr, pid};
  }
  locked_.insert(path);
  file.data = std::to_string(::getpid()) + "\n";
  file.synced = file.data.size();
  return LockAttempt{std::make_unique<Lock>(*this, path), 0};
}

std::optional<std::string> FakeFileSystem::contents(const std::string& path) const {
  std::lock_guard lock(mu_);
  const auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return it->second.visible();
}

void FakeFileSystem::set_contents(const std::string& path, std::string data) {
  std::lock_guard lock(mu_);
  File& file = files_[path];
  file.data = std::move(data);
  file.synced = file.data.size();
  file.reserved = 0;
}

bool FakeFileSystem::exists(const std::string& path) const {
  std::lock_guard lock(mu_);
  return files_.contains(path);
}

void FakeFileSystem::drop_unsynced() {
  std::lock_guard lock(mu_);
  for (auto& [path, file] : files_) file.data.resize(file.synced);
}

std::unique_ptr<FakeFileSystem> FakeFileSystem::image_after(Crash crash) const {
  auto image = std::make_unique<FakeFileSystem>();
  std::lock_guard lock(mu_);
  image->dirs_ = dirs_;
  for (const auto& [path, file] : files_) {
    File copy = file;
    switch (crash) {
      case Crash::kKill:
        copy.synced = copy.data.size();
        break;
      case Crash::kPowerLoss:
        copy.data.resize(copy.synced);
        break;
    }
    image->files_.emplace(path, std::move(copy));
  }
  return image;
}

void FakeFileSystem::block_syncs(std::string path_suffix) {
  std::lock_guard lock(mu_);
  syncs_blocked_ = true;
  blocked_suffix_ = std::move(path_suffix);
}

void FakeFileSystem::unblock_syncs() {
  {
    std::lock_guard lock(mu_);
    syncs_blocked_ = false;
  }
  cv_.notify_all();
}

bool FakeFileSystem::wait_for_blocked_syncs(int n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return blocked_syncs_ >= n; });
}

void FakeFileSystem::set_sync_delay(std::chrono::microseconds delay) {
  std::lock_guard lock(mu_);
  sync_delay_ = delay;
}

std::uint64_t FakeFileSystem::file_syncs() const {
  std::lock_guard lock(mu_);
  return file_syncs_;
}

std::thread::id FakeFileSystem::last_append_thread() const {
  std::lock_guard lock(mu_);
  return last_append_thread_;
}

void FakeFileSystem::fail_syncs(bool fail) {
  std::lock_guard lock(mu_);
  fail_syncs_ = fail;
}

void FakeFileSystem::fail_writes(bool fail, bool torn) {
  std::lock_guard lock(mu_);
  fail_writes_ = fail;
  torn_writes_ = fail && torn;
}

Status FakeFileSystem::append_to(const std::string& path,
                                 std::span<const std::string_view> pieces) {
  std::lock_guard lock(mu_);
  const auto it = files_.find(path);
  if (fail_writes_) {
    if (torn_writes_ && it != files_.end()) {
      std::string all;
      for (const std::string_view piece : pieces) all.append(piece);
      it->second.data.append(all, 0, all.size() / 2);
    }
    return fake_error("injected write error on", path);
  }
  if (it == files_.end()) return fake_error("write to removed file", path);
  for (const std::string_view piece : pieces) it->second.data.append(piece);
  last_append_thread_ = std::this_thread::get_id();
  return ok_status();
}

Status FakeFileSystem::sync_file(const std::string& path) {
  std::chrono::microseconds delay{0};
  {
    std::unique_lock lock(mu_);
    ++file_syncs_;
    if (syncs_blocked_ && path.ends_with(blocked_suffix_)) {
      ++blocked_syncs_;
      cv_.notify_all();  // wait_for_blocked_syncs
      cv_.wait(lock, [&] { return !syncs_blocked_; });
      --blocked_syncs_;
    }
    delay = sync_delay_;
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  std::lock_guard lock(mu_);
  const auto it = files_.find(path);
  if (it == files_.end()) return fake_error("sync of removed file", path);
  File& file = it->second;
  if (fail_syncs_) {
    if (file.lost_from == std::string::npos) file.lost_from = file.synced;
    return fake_error("injected sync error on", path);
  }
  if (file.lost_from == std::string::npos) file.synced = file.data.size();
  return ok_status();
}

Status FakeFileSystem::reserve(const std::string& path, std::uint64_t bytes, bool cut_to_data) {
  std::lock_guard lock(mu_);
  if (fail_writes_) return fake_error("injected write error on", path);
  const auto it = files_.find(path);
  if (it == files_.end()) return fake_error("preallocate of removed file", path);
  File& file = it->second;
  if (cut_to_data)
    file.reserved = 0;
  else
    file.reserved = std::max<std::size_t>(file.reserved, bytes);
  return ok_status();
}

void FakeFileSystem::unlock(const std::string& path) {
  std::lock_guard lock(mu_);
  locked_.erase(path);
}

}  // namespace holdfast::wal
