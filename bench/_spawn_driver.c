// The floor of per-case `score` (issue 17): for each payload line on stdin,
// `sh -c CMD` as the leader of a new session (posix_spawn +
// POSIX_SPAWN_SETSID, as evalpipe's spawner starts it), the payload written to
// its stdin, its stdout and stderr read to EOF, then reaped; C children at once
// through one poll loop. No timeouts, caps or validation beyond finding
// "score" in stdout. Prints how many did.
// Build: cc -O2 -o bench/.work/spawn_driver bench/_spawn_driver.c
// Usage: spawn_driver CMD C < payloads.ndjson
#define _GNU_SOURCE
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
typedef struct { pid_t pid; int fd[2]; size_t len; char out[4096]; } Slot;
static char *cmd, *line;
static size_t cap, ok, started;
static sigset_t pipe_default;  // SIGPIPE back to its default in the children
static int start(Slot *s) {
  ssize_t n = getline(&line, &cap, stdin);
  if (n <= 0) return 0;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) { perror("pipe2"); exit(1); }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_init(&at);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigdefault(&at, &pipe_default);
  char *argv[] = {"sh", "-c", cmd, NULL};
  if (posix_spawn(&s->pid, "/bin/sh", &fa, &at, argv, environ)) { perror("posix_spawn"); exit(1); }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(in[0]); close(out[1]); close(err[1]);
  if (line[n - 1] == '\n') n--;
  // A child that exits without reading its payload is its verdict's business.
  if (write(in[1], line, n) != n && errno != EPIPE) { perror("write"); exit(1); }
  close(in[1]);
  s->fd[0] = out[0]; s->fd[1] = err[0]; s->len = 0; started++;
  return 1;
}
int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: spawn_driver CMD C < payloads\n"); return 2; }
  cmd = argv[1];
  signal(SIGPIPE, SIG_IGN);
  sigemptyset(&pipe_default);
  sigaddset(&pipe_default, SIGPIPE);
  int c = atoi(argv[2]), live = 0;
  Slot *slots = calloc(c, sizeof(Slot));
  struct pollfd *p = calloc(2 * c, sizeof(struct pollfd));
  for (int i = 0; i < c; i++) live += start(&slots[i]) ? 1 : (slots[i].pid = 0);
  while (live > 0) {
    for (int i = 0; i < 2 * c; i++) { int fd = slots[i / 2].pid ? slots[i / 2].fd[i % 2] : -1; p[i].fd = fd; p[i].events = POLLIN; }
    if (poll(p, 2 * c, -1) < 0) { perror("poll"); return 1; }
    for (int i = 0; i < 2 * c; i++) {
      if (p[i].fd < 0 || !p[i].revents) continue;
      Slot *s = &slots[i / 2];
      char sink[4096];
      char *to = i % 2 ? sink : s->out + s->len;
      size_t room = i % 2 ? sizeof sink : sizeof s->out - 1 - s->len;
      ssize_t n = read(p[i].fd, to, room ? room : 1);
      if (n > 0) { if (!(i % 2) && room) s->len += n; continue; }
      close(p[i].fd); s->fd[i % 2] = -1;
      if (s->fd[0] >= 0 || s->fd[1] >= 0) continue;
      int status;
      waitpid(s->pid, &status, 0);
      s->out[s->len] = 0;
      if (WIFEXITED(status) && !WEXITSTATUS(status) && strstr(s->out, "score")) ok++;
      if (!start(s)) { s->pid = 0; live--; }
    }
  }
  printf("%zu\n", ok);
  return ok == started ? 0 : 1;
}
