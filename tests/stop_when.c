/*
 * stop_when: runs a command and stops it with a signal once its standard
 * error shows a line, for the tests of what a benchmark leaves behind
 * when it is interrupted.
 *
 *   stop_when SIGNAL PATTERN ERRFILE COMMAND [ARG...]
 *
 * COMMAND runs with SIGINT, SIGTERM and SIGHUP at their default actions
 * (whatever this process inherited; a shell's background job would
 * start with SIGINT ignored) unless SIGNAL is given as "ignored-HUP",
 * which starts it with SIGHUP ignored, as nohup does, and sends SIGHUP.
 * Its standard output is discarded and its standard error goes to
 * ERRFILE.  Once ERRFILE holds PATTERN (a plain substring), SIGNAL
 * (INT, TERM or HUP) is sent.  Exits with COMMAND's status as a shell
 * reports it: its exit code, or 128 + the signal that ended it.  125 if
 * PATTERN never showed (within 300 s, or before COMMAND ended); 124 if
 * COMMAND outlived the signal by 60 s (it is then killed).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int signal_named(const char *name)
{
    if (strcmp(name, "INT") == 0)
        return SIGINT;
    if (strcmp(name, "TERM") == 0)
        return SIGTERM;
    if (strcmp(name, "HUP") == 0 || strcmp(name, "ignored-HUP") == 0)
        return SIGHUP;
    return -1;
}

/* Whether the file at path holds pattern. */
static int file_holds(const char *path, const char *pattern)
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, pattern) != NULL;
}

static void nap(void)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int status_of(int st)
{
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
    int sig, st, err;
    pid_t pid;

    if (argc < 5 || (sig = signal_named(argv[1])) < 0) {
        fprintf(stderr, "usage: stop_when INT|TERM|HUP|ignored-HUP PATTERN "
                        "ERRFILE COMMAND [ARG...]\n");
        return 2;
    }
    /* Emptied before the command starts, so that nothing of an earlier
     * run's can match. */
    err = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0) {
        perror(argv[3]);
        return 2;
    }
    pid = fork();
    if (pid < 0) {
        perror("stop_when: fork");
        return 2;
    }
    if (pid == 0) {
        int out = open("/dev/null", O_WRONLY);
        sigset_t none;

        if (out < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(126);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, strcmp(argv[1], "ignored-HUP") == 0 ? SIG_IGN : SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[4], argv + 4);
        _exit(127);
    }
    close(err);
    for (int i = 0; !file_holds(argv[3], argv[2]); i++) {
        if (waitpid(pid, &st, WNOHANG) == pid || i >= 300 * 20) {
            fprintf(stderr, "stop_when: no '%s' from %s\n", argv[2], argv[4]);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 125;
        }
        nap();
    }
    kill(pid, sig);
    for (int i = 0; waitpid(pid, &st, WNOHANG) != pid; i++) {
        if (i >= 60 * 20) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 124;
        }
        nap();
    }
    return status_of(st);
}
