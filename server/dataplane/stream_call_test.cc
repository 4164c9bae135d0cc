// StreamCall on its own, over a fake handler: the protocol every stream follows
// (start first, answers in order, one message waiting at most, a handler's error as
// the call's status, the keystore's freshness at each message, cancellation, the
// idle watchdog, stream slots), whatever the messages mean. The handler is a fake;
// gRPC (an in-process channel), admission (a real keystore in a temporary directory,
// a real token) and the metrics are real. stream_handlers' handlers are tested end to
// end in tests/service (service_test, staleness_test).
#include "server/dataplane/stream_call.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/auth/admission.h"
#include "server/auth/auth.h"
#include "server/keystore/file/file_storage.h"
#include "server/keystore/keystore.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// How the fake handler answers. Consume echoes each piece `output_per_byte` times
// (a small request completing a large output) and fails on a piece holding '!'.
struct Script {
  size_t output_per_byte = 1;
  uint32_t key_version = 7;
  absl::Status begin_error;
  absl::Status consume_error = absl::FailedPreconditionError("the fake handler met '!'");
  absl::Status end_error;
};

// What one call's handler was asked, in order. Read the fields once `destroyed` is
// notified (the call is over); while it runs, through the locked accessors.
struct Journal {
  int consumes() {
    absl::MutexLock lock(&mu);
    return static_cast<int>(consumed_pieces);
  }
  int failures_so_far() {
    absl::MutexLock lock(&mu);
    return static_cast<int>(failures.size());
  }

  absl::Mutex mu;
  std::vector<std::string> events;  // "begin <key>", "end"; Consume is in `consumed`
  std::string consumed;             // every piece, in order
  size_t consumed_pieces = 0;
  size_t largest_waiting_output = 0;  // `out`'s size as Consume was entered
  size_t sending = 0;                 // what Sending was told, in all
  std::vector<absl::Status> failures;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};  // calls into the handler while another ran
  absl::Notification destroyed;
};

class FakeHandler final : public StreamHandler {
 public:
  FakeHandler(Script script, std::shared_ptr<Journal> journal)
      : script_(std::move(script)), journal_(std::move(journal)) {}
  ~FakeHandler() override { journal_->destroyed.Notify(); }

  Operation operation() const override { return Operation::kSeal; }

  absl::Status Begin(Caller caller, const v1::StreamStart& start,
                     crypto::OutputBytes& out) override {
    Entered entered(*journal_);
    absl::MutexLock lock(&journal_->mu);
    journal_->events.push_back(absl::StrCat("begin ", start.key(), " for ", caller.tenant));
    if (!script_.begin_error.ok()) return script_.begin_error;
    Append("header:" + start.key(), out);
    return absl::OkStatus();
  }

  absl::Status Consume(absl::Span<const uint8_t> piece, crypto::OutputBytes& out) override {
    Entered entered(*journal_);
    absl::MutexLock lock(&journal_->mu);
    journal_->largest_waiting_output = std::max(journal_->largest_waiting_output, out.size());
    const std::string bytes(piece.begin(), piece.end());
    if (bytes.find('!') != std::string::npos) return script_.consume_error;
    journal_->consumed += bytes;
    ++journal_->consumed_pieces;
    for (size_t i = 0; i < script_.output_per_byte; ++i) Append(bytes, out);
    return absl::OkStatus();
  }

  absl::Status End(crypto::OutputBytes& out) override {
    Entered entered(*journal_);
    absl::MutexLock lock(&journal_->mu);
    journal_->events.push_back("end");
    if (!script_.end_error.ok()) return script_.end_error;
    Append("trailer", out);
    return absl::OkStatus();
  }

  uint32_t key_version() const override { return script_.key_version; }
  bool OutputIsSecret() const override { return false; }

  void Sending(size_t bytes) override {
    absl::MutexLock lock(&journal_->mu);
    journal_->sending += bytes;
  }

  void Failed(const absl::Status& status) override {
    absl::MutexLock lock(&journal_->mu);
    journal_->failures.push_back(status);
  }

 private:
  // Counts a call into the handler that began while another was still running.
  class Entered {
   public:
    explicit Entered(Journal& journal) : journal_(journal) {
      if (journal_.inside.fetch_add(1) != 0) journal_.overlaps.fetch_add(1);
    }
    ~Entered() { journal_.inside.fetch_sub(1); }

   private:
    Journal& journal_;
  };

  static void Append(const std::string& bytes, crypto::OutputBytes& out) {
    out.insert(out.end(), bytes.begin(), bytes.end());
  }

  const Script script_;
  const std::shared_ptr<Journal> journal_;
};

// SealStream only, each call a StreamCall over a FakeHandler; the other methods are
// left unimplemented.
class FakeStreamService final
    : public v1::Crypto::WithRawCallbackMethod_SealStream<v1::Crypto::Service> {
 public:
  FakeStreamService(const Admission& admission, StreamSlots& slots, Metrics& metrics)
      : admission_(admission), slots_(slots), metrics_(metrics) {}

  void set_script(Script script) {
    absl::MutexLock lock(&mu_);
    script_ = std::move(script);
  }

  // The journal of the `i`th call (from 0); null before it started.
  std::shared_ptr<Journal> journal(size_t i) {
    absl::MutexLock lock(&mu_);
    return i < journals_.size() ? journals_[i] : nullptr;
  }

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* SealStream(
      grpc::CallbackServerContext* context) override {
    auto journal = std::make_shared<Journal>();
    Script script;
    {
      absl::MutexLock lock(&mu_);
      journals_.push_back(journal);
      script = script_;
    }
    return StreamCall::Start(context, "SealStream", admission_, slots_, metrics_, /*audit=*/nullptr,
                             std::make_unique<FakeHandler>(std::move(script), std::move(journal)));
  }

 private:
  const Admission& admission_;
  StreamSlots& slots_;
  Metrics& metrics_;
  absl::Mutex mu_;
  Script script_;
  std::vector<std::shared_ptr<Journal>> journals_;
};

using ClientStream = grpc::ClientReaderWriter<v1::SealStreamRequest, v1::SealStreamResponse>;

// What the fixture is made with; each suite's Configure changes it.
struct Settings {
  absl::Duration max_staleness = absl::InfiniteDuration();
  absl::Duration idle_timeout = absl::ZeroDuration();
  int max_open = 16;
};

class StreamCallTest : public ::testing::Test {
 protected:
  virtual void Configure(Settings&) {}

  void SetUp() override {
    Configure(settings_);
    std::string base = absl::StrCat(getenv("TEST_TMPDIR"), "/stream_call.XXXXXX");
    ASSERT_NE(mkdtemp(base.data()), nullptr);
    data_dir_ = base + "/data";
    FileStorageOptions storage;
    storage.data_dir = data_dir_;
    storage.kek = *Kek::FromBytes(std::vector<uint8_t>(kKekBytes, 1));
    storage.poll_interval = absl::Milliseconds(20);
    auto file = FileStorage::Create(std::move(storage));
    ASSERT_TRUE(file.ok()) << file.status();
    KeystoreOpenOptions open;
    open.create = true;
    open.max_staleness = settings_.max_staleness;
    auto keystore = Keystore::Open(*std::move(file), std::move(open));
    ASSERT_TRUE(keystore.ok()) << keystore.status();
    keystore_ = *std::move(keystore);
    ASSERT_TRUE(keystore_->tenants().CreateTenant("acme").ok());
    auto issued = keystore_->tokens().IssueToken("acme", "stream_call_test");
    ASSERT_TRUE(issued.ok()) << issued.status();
    token_ = issued->token;

    authenticator_ = std::make_unique<Authenticator>("", std::map<std::string, std::string>{});
    admission_ = std::make_unique<Admission>(keystore_.get(), authenticator_.get());
    slots_ = std::make_unique<StreamSlots>(settings_.max_open, settings_.idle_timeout);
    service_ = std::make_unique<FakeStreamService>(*admission_, *slots_, metrics_);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Crypto::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  }

  // A stream with the tenant's token (or `token`).
  struct Call {
    grpc::ClientContext context;
    std::unique_ptr<ClientStream> stream;
  };
  std::unique_ptr<Call> NewCall(const std::string& token) {
    auto call = std::make_unique<Call>();
    if (!token.empty()) call->context.AddMetadata("authorization", "Bearer " + token);
    call->stream = stub_->SealStream(&call->context);
    return call;
  }
  std::unique_ptr<Call> NewCall() { return NewCall(token_); }

  static bool WriteStart(Call& call, const std::string& key = "orders") {
    v1::SealStreamRequest request;
    request.mutable_start()->set_key(key);
    return call.stream->Write(request);
  }
  static bool WriteChunk(Call& call, const std::string& chunk) {
    v1::SealStreamRequest request;
    request.set_plaintext_chunk(chunk);
    return call.stream->Write(request);
  }

  // Every response until the end, then the status.
  static grpc::Status ReadToEnd(Call& call, std::vector<v1::SealStreamResponse>* responses) {
    v1::SealStreamResponse response;
    while (call.stream->Read(&response)) responses->push_back(response);
    return call.stream->Finish();
  }

  // Sends start, `chunks` and the half-close while reading every response (as a
  // real client must: the server answers before it reads further).
  grpc::Status Run(const std::vector<std::string>& chunks,
                   std::vector<v1::SealStreamResponse>* responses) {
    auto call = NewCall();
    std::thread reader([&] {
      v1::SealStreamResponse response;
      while (call->stream->Read(&response)) responses->push_back(response);
    });
    if (WriteStart(*call)) {
      for (const std::string& chunk : chunks) {
        if (!WriteChunk(*call, chunk)) break;
      }
    }
    call->stream->WritesDone();
    reader.join();
    return call->stream->Finish();
  }

  // The `i`th call's journal once its StreamCall is gone (every handler call done).
  std::shared_ptr<Journal> Ended(size_t i) {
    std::shared_ptr<Journal> journal = service_->journal(i);
    EXPECT_NE(journal, nullptr) << "call " << i << " never started";
    if (journal == nullptr) return std::make_shared<Journal>();
    EXPECT_TRUE(journal->destroyed.WaitForNotificationWithTimeout(absl::Seconds(5)));
    return journal;
  }

  // Waits (up to 5 s) until `done` holds.
  template <typename Predicate>
  static bool Eventually(Predicate done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  static std::string Joined(const std::vector<v1::SealStreamResponse>& responses) {
    std::string joined;
    for (const auto& response : responses) joined += response.ciphertext_chunk();
    return joined;
  }

  Settings settings_;
  std::string data_dir_;
  std::string token_;
  Metrics metrics_;
  std::unique_ptr<Keystore> keystore_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<Admission> admission_;
  std::unique_ptr<StreamSlots> slots_;
  std::unique_ptr<FakeStreamService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Crypto::Stub> stub_;
};

TEST_F(StreamCallTest, AnswersEveryMessageInOrderThenFinishesOk) {
  std::vector<std::string> chunks;
  std::string all;
  for (int i = 0; i < 50; ++i) {
    chunks.push_back(absl::StrCat("chunk", i, ";"));
    all += chunks.back();
  }
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = Run(chunks, &responses);
  ASSERT_TRUE(status.ok()) << status.error_message();

  // The header alone first (sent as Begin made it), then every chunk's output in
  // order, then what End made; each response carries the handler's key version.
  ASSERT_GE(responses.size(), 3u);
  EXPECT_EQ(responses.front().ciphertext_chunk(), "header:orders");
  EXPECT_EQ(responses.back().ciphertext_chunk(), "trailer");
  EXPECT_EQ(Joined(responses), "header:orders" + all + "trailer");
  for (const auto& response : responses) EXPECT_EQ(response.key_version(), 7u);

  std::shared_ptr<Journal> journal = Ended(0);
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme", "end"));
  EXPECT_EQ(journal->consumed, all);
  EXPECT_EQ(journal->sending, Joined(responses).size());
  EXPECT_TRUE(journal->failures.empty());
  EXPECT_EQ(journal->overlaps.load(), 0);
  EXPECT_EQ(slots_->open.load(), 0);
  const std::string metrics = metrics_.Render();
  EXPECT_THAT(metrics, HasSubstr("sealbox_active_streams 0\n"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_rpcs_total{method=\"SealStream\",code=\"OK\"} 1\n"));
}

TEST_F(StreamCallTest, AnEmptyStreamFinishesOkWithItsHeaderAndTrailer) {
  std::vector<v1::SealStreamResponse> responses;
  ASSERT_TRUE(Run({}, &responses).ok());
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].ciphertext_chunk(), "header:orders");
  EXPECT_EQ(responses[1].ciphertext_chunk(), "trailer");
  EXPECT_EQ(Ended(0)->consumed, "");
}

TEST_F(StreamCallTest, SplitsALargeOutputIntoResponsesOfAtMostTheChunkLimit) {
  Script script;
  script.output_per_byte = 1024;
  service_->set_script(script);
  const std::string chunk(2049, 'p');  // 2 MiB and 1 KiB of output from one message
  std::vector<v1::SealStreamResponse> responses;
  ASSERT_TRUE(Run({chunk}, &responses).ok());

  std::vector<size_t> sizes;
  for (const auto& response : responses) sizes.push_back(response.ciphertext_chunk().size());
  EXPECT_THAT(sizes, ElementsAre(13, kMaxResponseChunk, 1024, 7));
  EXPECT_EQ(Joined(responses), "header:orders" + std::string(2049 * 1024, 'p') + "trailer");
}

// Bounded memory: while the client takes no response, the server reads no further
// than one message answered (its write outstanding) and one whose output waits; the
// client's later writes wait. Once it reads, everything flows, in order.
TEST_F(StreamCallTest, ReadsNoFurtherWhileOutputWaitsToBeSent) {
  Script script;
  script.output_per_byte = 1024;  // 16 bytes in, 16 KiB out
  service_->set_script(script);
  constexpr int kMessages = 8;
  constexpr size_t kChunk = 16;
  auto call = NewCall();
  ASSERT_TRUE(WriteStart(*call));
  v1::SealStreamResponse header;
  ASSERT_TRUE(call->stream->Read(&header));
  EXPECT_EQ(header.ciphertext_chunk(), "header:orders");

  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < kMessages; ++i) {
      if (!WriteChunk(*call, std::string(kChunk, static_cast<char>('a' + i)))) break;
      written.fetch_add(1);
    }
    call->stream->WritesDone();
  });
  // Asserting nothing fatal until the writer is joined.
  std::shared_ptr<Journal> journal = service_->journal(0);
  EXPECT_NE(journal, nullptr);
  EXPECT_TRUE(Eventually([&] { return journal->consumes() >= 2; }));
  absl::SleepFor(absl::Milliseconds(200));  // time to read on, if it would
  EXPECT_EQ(journal->consumes(), 2);
  EXPECT_LT(written.load(), kMessages);

  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = ReadToEnd(*call, &responses);
  writer.join();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(written.load(), kMessages);
  std::string sent, expected;
  for (int i = 0; i < kMessages; ++i) {
    sent += std::string(kChunk, 'a' + i);
    expected += std::string(kChunk * 1024, 'a' + i);
  }
  EXPECT_EQ(Joined(responses), expected + "trailer");

  Ended(0);
  EXPECT_EQ(journal->consumed, sent);
  // Consume never met another message's output still waiting to go out.
  EXPECT_LT(journal->largest_waiting_output, kChunk * 1024);
  EXPECT_EQ(journal->overlaps.load(), 0);
}

TEST_F(StreamCallTest, AHandlersErrorEndsTheCallWithThatStatus) {
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = Run({"one;", "two!", "three;"}, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "the fake handler met '!'");

  std::shared_ptr<Journal> journal = Ended(0);
  EXPECT_EQ(journal->consumed, "one;");  // nothing after the failing message
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme"));  // no End
  ASSERT_EQ(journal->failures.size(), 1u);
  EXPECT_EQ(journal->failures[0].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(slots_->open.load(), 0);
}

TEST_F(StreamCallTest, ErrorsFromBeginAndEndEndTheCallToo) {
  Script script;
  script.begin_error = absl::NotFoundError("no such key");
  service_->set_script(script);
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = Run({"never consumed"}, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no such key");
  EXPECT_TRUE(responses.empty());
  EXPECT_EQ(Ended(0)->consumed, "");
  EXPECT_EQ(Ended(0)->failures.size(), 1u);

  script = Script();
  script.end_error = absl::InvalidArgumentError("truncated");
  service_->set_script(script);
  responses.clear();
  status = Run({"all;", "of it;"}, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "truncated");
  EXPECT_EQ(Joined(responses), "header:ordersall;of it;");  // what was sent stays sent
  ASSERT_EQ(Ended(1)->failures.size(), 1u);
  EXPECT_EQ(Ended(1)->failures[0].message(), "truncated");
}

// Counted at once, before the answer in flight is even taken, so that a client that
// goes away then cannot escape what Failed counts; the call ends after that answer.
TEST_F(StreamCallTest, AnErrorWhileAnAnswerIsInFlightIsCountedAtOnce) {
  Script script;
  script.output_per_byte = 1024;
  service_->set_script(script);
  auto call = NewCall();
  ASSERT_TRUE(WriteStart(*call));
  v1::SealStreamResponse response;
  ASSERT_TRUE(call->stream->Read(&response));            // the header: no write outstanding now
  ASSERT_TRUE(WriteChunk(*call, std::string(64, 'a')));  // 64 KiB out, not taken yet
  WriteChunk(*call, "bad!");
  std::shared_ptr<Journal> journal = service_->journal(0);
  ASSERT_NE(journal, nullptr);
  EXPECT_TRUE(Eventually([&] { return journal->failures_so_far() == 1; }));

  call->stream->WritesDone();
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = ReadToEnd(*call, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Joined(responses), std::string(64 * 1024, 'a'));
  Ended(0);
  EXPECT_EQ(journal->failures.size(), 1u);  // not counted again as the call ends
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme"));
}

TEST_F(StreamCallTest, TheFirstMessageMustBeStartAndOnlyTheFirst) {
  auto chunk_first = NewCall();
  WriteChunk(*chunk_first, "data");
  chunk_first->stream->WritesDone();
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status status = ReadToEnd(*chunk_first, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "the first message must be `start`");
  EXPECT_TRUE(Ended(0)->events.empty());  // never begun
  EXPECT_EQ(Ended(0)->failures.size(), 1u);

  auto two_starts = NewCall();
  WriteStart(*two_starts);
  WriteStart(*two_starts);
  two_starts->stream->WritesDone();
  status = ReadToEnd(*two_starts, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "`start` may only be the first message");
  EXPECT_THAT(Ended(1)->events, ElementsAre("begin orders for acme"));

  auto nothing = NewCall();
  nothing->stream->WritesDone();
  status = ReadToEnd(*nothing, &responses);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "the stream ended before its start message");
  EXPECT_TRUE(Ended(2)->events.empty());
  EXPECT_EQ(slots_->open.load(), 0);
}

// Admission on the start message: who calls, the key's name, and the token's scope
// against the handler's operation (kSeal). The handler never begins.
TEST_F(StreamCallTest, TheCallerIsAdmittedOnTheStartMessage) {
  TokenRequest open_only;
  open_only.scope.operations = {Operation::kOpen};
  auto scoped = keystore_->tokens().IssueToken("acme", open_only);
  ASSERT_TRUE(scoped.ok()) << scoped.status();

  struct Case {
    std::string token;
    std::string key;
    grpc::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"", "orders", grpc::StatusCode::UNAUTHENTICATED},
      {"not-a-token", "orders", grpc::StatusCode::UNAUTHENTICATED},
      {token_, "../orders", grpc::StatusCode::INVALID_ARGUMENT},
      {scoped->token, "orders", grpc::StatusCode::PERMISSION_DENIED},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto call = NewCall(cases[i].token);
    WriteStart(*call, cases[i].key);
    call->stream->WritesDone();
    std::vector<v1::SealStreamResponse> responses;
    grpc::Status status = ReadToEnd(*call, &responses);
    EXPECT_EQ(status.error_code(), cases[i].code) << i << ": " << status.error_message();
    EXPECT_TRUE(responses.empty()) << i;
    EXPECT_TRUE(Ended(i)->events.empty()) << i;
    ASSERT_EQ(Ended(i)->failures.size(), 1u) << i;
    EXPECT_EQ(static_cast<int>(Ended(i)->failures[0].code()), static_cast<int>(cases[i].code));
  }
}

TEST_F(StreamCallTest, AClientThatCancelsEndsTheCallWithoutEnd) {
  auto call = NewCall();
  ASSERT_TRUE(WriteStart(*call));
  ASSERT_TRUE(WriteChunk(*call, "some;"));
  v1::SealStreamResponse response;
  ASSERT_TRUE(call->stream->Read(&response));
  std::shared_ptr<Journal> journal = service_->journal(0);
  ASSERT_TRUE(Eventually([&] { return journal->consumes() == 1; }));
  call->context.TryCancel();
  std::vector<v1::SealStreamResponse> rest;
  EXPECT_EQ(ReadToEnd(*call, &rest).error_code(), grpc::StatusCode::CANCELLED);

  Ended(0);
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme"));  // no End
  ASSERT_EQ(journal->failures.size(), 1u);
  EXPECT_EQ(journal->failures[0].code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(slots_->open.load(), 0);
  EXPECT_THAT(metrics_.Render(), HasSubstr("sealbox_active_streams 0"));
}

class OneStreamSlotTest : public StreamCallTest {
 protected:
  void Configure(Settings& settings) override { settings.max_open = 1; }
};

// A stream beyond max_open is refused; a slot is free again before the client hears
// its stream's status, so the next stream is never refused for it.
TEST_F(OneStreamSlotTest, RefusesAStreamBeyondTheLimitAndFreesTheSlotAtTheEnd) {
  auto first = NewCall();
  ASSERT_TRUE(WriteStart(*first));
  v1::SealStreamResponse response;
  ASSERT_TRUE(first->stream->Read(&response));

  auto second = NewCall();
  WriteStart(*second);
  second->stream->WritesDone();
  std::vector<v1::SealStreamResponse> responses;
  grpc::Status refused = ReadToEnd(*second, &responses);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(), "too many concurrent streams");
  EXPECT_TRUE(Ended(1)->events.empty());

  first->stream->WritesDone();
  EXPECT_TRUE(ReadToEnd(*first, &responses).ok());
  for (int i = 0; i < 5; ++i) {  // at once, each after the last one's status
    std::vector<v1::SealStreamResponse> next;
    grpc::Status status = Run({"x"}, &next);
    EXPECT_TRUE(status.ok()) << i << ": " << status.error_message();
  }
}

class StaleKeystoreTest : public StreamCallTest {
 protected:
  // Many polls (20 ms apart) long, so that a busy machine's pauses do not make the
  // keystore stale before the test takes its file away.
  void Configure(Settings& settings) override { settings.max_staleness = absl::Seconds(1); }
};

// A stream that began while the keystore was current ends at its next message once
// the keystore stops serving, with the UNAVAILABLE a new call gets; that message is
// not consumed.
TEST_F(StaleKeystoreTest, AStreamEndsAtItsNextMessageOnceTheKeystoreIsStale) {
  auto call = NewCall();
  ASSERT_TRUE(WriteStart(*call));
  ASSERT_TRUE(WriteChunk(*call, "fresh;"));
  v1::SealStreamResponse response;
  ASSERT_TRUE(call->stream->Read(&response));  // the header
  ASSERT_TRUE(call->stream->Read(&response));
  EXPECT_EQ(response.ciphertext_chunk(), "fresh;");

  // The file out of reach: no poll proves the keystore current any more.
  ASSERT_EQ(rename(data_dir_.c_str(), (data_dir_ + ".away").c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return !keystore_->Serving().ok(); }));
  WriteChunk(*call, "stale;");
  call->stream->WritesDone();
  std::vector<v1::SealStreamResponse> rest;
  grpc::Status status = ReadToEnd(*call, &rest);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("stale"));
  EXPECT_TRUE(rest.empty());

  std::shared_ptr<Journal> journal = Ended(0);
  EXPECT_EQ(journal->consumed, "fresh;");
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme"));  // no End
  ASSERT_EQ(journal->failures.size(), 1u);
  EXPECT_EQ(journal->failures[0].code(), absl::StatusCode::kUnavailable);
  ASSERT_EQ(rename((data_dir_ + ".away").c_str(), data_dir_.c_str()), 0);
}

// A second: long enough that a busy machine's pauses do not pass for a stalled client.
constexpr absl::Duration kIdleTimeout = absl::Seconds(1);

class IdleStreamTest : public StreamCallTest {
 protected:
  void Configure(Settings& settings) override { settings.idle_timeout = kIdleTimeout; }
};

// A stream with no progress for the idle timeout is cancelled; its outcome is
// DEADLINE_EXCEEDED in the metrics, and the idle timeout is counted.
TEST_F(IdleStreamTest, AStreamWithNoProgressIsCancelled) {
  const absl::Time began = absl::Now();  // before any progress it could make
  auto call = NewCall();
  ASSERT_TRUE(WriteStart(*call));
  v1::SealStreamResponse response;
  ASSERT_TRUE(call->stream->Read(&response));
  std::vector<v1::SealStreamResponse> rest;
  EXPECT_EQ(ReadToEnd(*call, &rest).error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_GE(absl::Now() - began, kIdleTimeout);

  std::shared_ptr<Journal> journal = Ended(0);
  EXPECT_THAT(journal->events, ElementsAre("begin orders for acme"));
  EXPECT_EQ(journal->failures.size(), 1u);
  const std::string metrics = metrics_.Render();
  EXPECT_THAT(metrics, HasSubstr("sealbox_stream_idle_timeouts_total 1\n"));
  EXPECT_THAT(
      metrics,
      HasSubstr("sealbox_rpcs_total{method=\"SealStream\",code=\"DEADLINE_EXCEEDED\"} 1\n"));
  EXPECT_EQ(slots_->open.load(), 0);
}

// Each message received is progress: a stream slower than the timeout overall, but
// never idle that long, runs to its end.
TEST_F(IdleStreamTest, AStreamThatKeepsSendingIsNotCancelled) {
  auto call = NewCall();
  std::vector<v1::SealStreamResponse> responses;
  std::thread reader([&] {
    v1::SealStreamResponse response;
    while (call->stream->Read(&response)) responses.push_back(response);
  });
  EXPECT_TRUE(WriteStart(*call));
  for (int i = 0; i < 24; ++i) {  // 2.4 s in all, more than twice the timeout
    absl::SleepFor(kIdleTimeout / 10);
    EXPECT_TRUE(WriteChunk(*call, "tick;")) << i;
  }
  call->stream->WritesDone();
  reader.join();
  grpc::Status status = call->stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Ended(0)->consumed.size(), 24 * std::string("tick;").size());
  EXPECT_THAT(metrics_.Render(), HasSubstr("sealbox_stream_idle_timeouts_total 0\n"));
}

}  // namespace
}  // namespace sealbox::server
