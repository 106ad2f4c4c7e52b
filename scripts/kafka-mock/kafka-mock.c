/*
 * Local Kafka-protocol broker for development and tests: librdkafka's mock
 * cluster (real wire protocol over TCP, data kept in memory only).
 *
 * usage: kafka-mock <bootstrap-file> <control-fifo> [topic:partitions ...]
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
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t running = 1;
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
  char errstr[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!rk) { fprintf(stderr, "kafka-mock: %s\n", errstr); return 1; }
  rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
  if (!mc) { fprintf(stderr, "kafka-mock: cannot create mock cluster\n"); return 1; }

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
