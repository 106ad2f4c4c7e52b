/*
 * Local Kafka-protocol broker for development and tests: librdkafka's mock
 * cluster (real wire protocol over TCP, data kept in memory only).
 *
 * usage: kafka-mock <bootstrap-file> <control-fifo> [topic:partitions ...]
 *
 * KAFKA_PORT (env) fixes the listen port (0 or unset: a random port), so clients
 * reconnect to the same address after the broker restarts. Each start also creates
 * an empty topic `meterline.generation.<start ms>.<pid>`: a client that sees its name
 * change knows the broker restarted and lost every record (see ingest/spool).
 *
 * Writes the bootstrap address to <bootstrap-file> once listening, then reads
 * fault-injection commands, one per line, from <control-fifo>:
 *   down | up                        all brokers refuse / accept connections
 *   errors <api-key> <count> <code>  the next <count> requests of that Kafka
 *                                    API key fail with error <code>
 *   topic <name> <partitions>        create a topic (the admin API is not supported)
 * Runs until SIGTERM/SIGINT.
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t running = 1;
static int fixed_port = 0;

/*
 * librdkafka 2.0's mock cluster always binds its broker listener to 127.0.0.1:0 and has no
 * setting for the port. This definition of bind() takes precedence over libc's for the
 * library (symbol interposition), and moves the one loopback port-0 listener to KAFKA_PORT.
 */
int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  if (fixed_port > 0 && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in sin;
    memcpy(&sin, addr, sizeof(sin));
    if (sin.sin_port == 0) {
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sin.sin_port = htons((uint16_t)fixed_port);
      fixed_port = 0; /* only the first (the broker's) listener */
      return (int)syscall(SYS_bind, fd, (struct sockaddr *)&sin, sizeof(sin));
    }
  }
  return (int)syscall(SYS_bind, fd, addr, len);
}
static void on_signal(int sig) { (void)sig; running = 0; }

static void handle_command(rd_kafka_mock_cluster_t *mc, char *line) {
  int api_key, count, code, partitions;
  char name[256];
  if (strncmp(line, "down", 4) == 0) {
    rd_kafka_mock_broker_set_down(mc, -1);
  } else if (strncmp(line, "up", 2) == 0) {
    rd_kafka_mock_broker_set_up(mc, -1);
  } else if (sscanf(line, "errors %d %d %d", &api_key, &count, &code) == 3 && count > 0) {
    rd_kafka_resp_err_t *errs = calloc((size_t)count, sizeof(*errs));
    for (int i = 0; i < count; i++) errs[i] = (rd_kafka_resp_err_t)code;
    rd_kafka_mock_push_request_errors_array(mc, (int16_t)api_key, (size_t)count, errs);
    free(errs);
  } else if (sscanf(line, "topic %255s %d", name, &partitions) == 2 && partitions > 0) {
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, name, partitions, 1);
    if (err) fprintf(stderr, "kafka-mock: topic %s: %s\n", name, rd_kafka_err2str(err));
  } else {
    fprintf(stderr, "kafka-mock: unknown command: %s\n", line);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <bootstrap-file> <control-fifo> [topic:partitions ...]\n", argv[0]);
    return 2;
  }
  const char *port_env = getenv("KAFKA_PORT");
  if (port_env && *port_env) fixed_port = atoi(port_env);
  char errstr[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!rk) { fprintf(stderr, "kafka-mock: %s\n", errstr); return 1; }
  rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
  if (!mc) { fprintf(stderr, "kafka-mock: cannot create mock cluster (port in use?)\n"); return 1; }
  if (fixed_port > 0) { fprintf(stderr, "kafka-mock: could not bind port %s\n", port_env); return 1; }

  struct timeval now;
  gettimeofday(&now, NULL);
  char generation[128];
  snprintf(generation, sizeof(generation), "meterline.generation.%lld.%d",
           (long long)now.tv_sec * 1000 + now.tv_usec / 1000, (int)getpid());
  rd_kafka_mock_topic_create(mc, generation, 1, 1);

  for (int i = 3; i < argc; i++) {
    char name[256];
    int partitions = 1;
    if (sscanf(argv[i], "%255[^:]:%d", name, &partitions) < 1) continue;
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, name, partitions, 1);
    if (err) fprintf(stderr, "kafka-mock: topic %s: %s\n", name, rd_kafka_err2str(err));
  }

  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
  FILE *f = fopen(tmp, "w");
  if (!f) { perror("kafka-mock: bootstrap file"); return 1; }
  fprintf(f, "%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  fclose(f);
  rename(tmp, argv[1]);
  printf("kafka-mock listening on %s\n", rd_kafka_mock_cluster_bootstraps(mc));
  fflush(stdout);

  unlink(argv[2]);
  if (mkfifo(argv[2], 0600) != 0) { perror("kafka-mock: mkfifo"); return 1; }
  /* O_RDWR keeps the fifo open even while no writer is attached. */
  int fd = open(argv[2], O_RDWR | O_NONBLOCK);
  char buf[1024];
  size_t used = 0;
  while (running) {
    ssize_t n = fd >= 0 ? read(fd, buf + used, sizeof(buf) - 1 - used) : -1;
    if (n > 0) {
      used += (size_t)n;
      buf[used] = 0;
      char *nl;
      while ((nl = strchr(buf, '\n')) != NULL) {
        *nl = 0;
        handle_command(mc, buf);
        used -= (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, used + 1);
      }
      if (used >= sizeof(buf) - 1) used = 0;
    } else {
      usleep(100000);
    }
  }
  if (fd >= 0) close(fd);
  unlink(argv[2]);
  unlink(argv[1]);
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}
