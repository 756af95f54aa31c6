// The ceiling the benchmark compares the worker against: the least a libfcgi responder can do
// per request on this machine. Threads accept on one socket and write a fixed JSON body, or, with
// --pk-read, first do one prepared primary-key read of a history row (a connection per thread).
//   bench-responder --listen /tmp/r.sock --threads 16 [--pk-read --db-socket S --db-user U
//                   --db-password P --db-name connector --max-id N]
#include <fcgiapp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string listen = "/tmp/bench-responder.sock";
  int threads = 16;
  bool pk_read = false;
  std::string db_socket, db_user = "connector", db_password, db_name = "connector";
  unsigned long max_id = 1;
};

constexpr std::string_view kBody =
    R"({"networks":[{"network":"UNITCore","chain_id":"36888","base_chain":"MainBase","slug":"unitcore"},{"network":"UNITIoT","chain_id":"1012","base_chain":"SideBase","slug":"unitiot"}]})";

void serve(int fd, const Options& options) {
  std::unique_ptr<sql::Connection> connection;
  std::unique_ptr<sql::PreparedStatement> read;
  sql::mysql::MySQL_Driver* driver = sql::mysql::get_mysql_driver_instance();
  driver->threadInit();
  if (options.pk_read) {
    sql::ConnectOptionsMap map;
    map["hostName"] = sql::SQLString("unix://" + options.db_socket);
    map["userName"] = sql::SQLString(options.db_user);
    map["password"] = sql::SQLString(options.db_password);
    map["schema"] = sql::SQLString(options.db_name);
    connection.reset(driver->connect(map));
    read.reset(connection->prepareStatement("SELECT hash, status FROM history WHERE id = ?"));
  }
  std::mt19937_64 random(static_cast<unsigned long>(fd) ^
                         std::hash<std::thread::id>{}(std::this_thread::get_id()));
  FCGX_Request request;
  FCGX_InitRequest(&request, fd, 0);
  const std::string head =
      "Status: 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
      "Content-Length: " +
      std::to_string(kBody.size()) + "\r\n\r\n";
  while (FCGX_Accept_r(&request) >= 0) {
    if (read) {
      read->setUInt64(1, 1 + random() % options.max_id);
      std::unique_ptr<sql::ResultSet> rs(read->executeQuery());
      rs->next();
    }
    FCGX_PutStr(head.data(), static_cast<int>(head.size()), request.out);
    FCGX_PutStr(kBody.data(), static_cast<int>(kBody.size()), request.out);
    FCGX_Finish_r(&request);
  }
  read.reset();
  connection.reset();
  driver->threadEnd();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--listen")
      o.listen = value();
    else if (arg == "--threads")
      o.threads = std::stoi(value());
    else if (arg == "--pk-read")
      o.pk_read = true;
    else if (arg == "--db-socket")
      o.db_socket = value();
    else if (arg == "--db-user")
      o.db_user = value();
    else if (arg == "--db-password")
      o.db_password = value();
    else if (arg == "--db-name")
      o.db_name = value();
    else if (arg == "--max-id")
      o.max_id = std::stoul(value());
    else {
      std::cerr << "bench-responder: unknown argument " << arg << "\n";
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  ::setenv("LIBFCGI_OS_CLOSE_POLL_TIMEOUT", "0", 0);
  FCGX_Init();
  ::unlink(o.listen.c_str());
  const int fd = FCGX_OpenSocket(o.listen.c_str(), 1024);
  if (fd < 0) return 1;
  ::chmod(o.listen.c_str(), 0666);
  sql::mysql::get_mysql_driver_instance();
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) threads.emplace_back(serve, fd, std::cref(o));
  for (auto& t : threads) t.join();
  return 0;
}
