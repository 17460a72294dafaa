/* Plain C MPI ping-pong in the style of the OSU micro-benchmarks.
 *
 * osu_latency: ranks 0 and 1 bounce a message with blocking MPI_Send/MPI_Recv;
 * the one-way latency is the round-trip time over 2 (the POP paper's "single
 * direction" time of a bi-directional ping-pong, Kerbyson & Jones eq. 10).
 * osu_bw: rank 0 posts a window of non-blocking sends, rank 1 a window of
 * receives, then a 4-byte acknowledgement; bandwidth = window * size / time.
 *
 * It exists to check benchdb's mpi4py ping-pong against plain C built with
 * the same MPICH (benchmarks/c_pingpong.py builds and runs both).  For every
 * size it prints one line:
 *   size_bytes  oneway_seconds_median  oneway_seconds_min  pingpong_B_per_s  stream_B_per_s
 * Each of SAMPLES samples times enough repetitions to last MIN_SAMPLE_S.
 *
 * usage: c_pingpong MAX_BYTES [SAMPLES] [MIN_SAMPLE_S] [SIZE ...]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WINDOW 64

/* Page-aligned, 4 KiB pages (as osu_bw's buffers; benchdb's are the same: see
   collectors/mpi/buffers.py): transparent huge pages would change large-message
   bandwidth, and whether malloc's buffer gets them depends on the THP mode. */
static char *page_buffer(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes) != 0) { perror("posix_memalign"); exit(2); }
    madvise(p, bytes, MADV_NOHUGEPAGE);
    return p;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Round trips of `size` bytes, `reps` times; seconds elapsed on rank 0 (others 0). */
static double pingpong(char *buf, long size, long reps, int rank) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return rank == 0 ? t : 0.0;
}

/* osu_bw: windows of non-blocking sends then an ack; seconds elapsed on rank 0. */
static double stream(char *sbuf, char *rbuf, long size, long reps, int rank) {
    MPI_Request req[WINDOW];
    char ack[4];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf + (size_t)w * size, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(ack, 4, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return rank == 0 ? t : 0.0;
}

typedef double (*timed_fn)(char *, char *, long, long, int);

static double pingpong_adapter(char *a, char *b, long s, long r, int rank) {
    (void)b;
    return pingpong(a, s, r, rank);
}

/* Repetitions so that one sample lasts at least min_s (agreed by broadcast). */
static long calibrate(timed_fn fn, char *a, char *b, long size, double min_s, int rank) {
    long reps = 1;
    for (;;) {
        double t = fn(a, b, size, reps, rank);
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (t >= min_s || reps >= (1L << 24)) return reps;
        reps *= 2;
    }
}

static void measure(timed_fn fn, char *a, char *b, long size, int samples, double min_s,
                    int rank, double *med, double *mn, long *reps_out) {
    long reps = calibrate(fn, a, b, size, min_s, rank); /* also the warm-up */
    double *t = malloc(sizeof(double) * samples);
    for (int s = 0; s < samples; s++) t[s] = fn(a, b, size, reps, rank) / reps;
    qsort(t, samples, sizeof(double), cmp_double);
    *med = samples % 2 ? t[samples / 2] : 0.5 * (t[samples / 2 - 1] + t[samples / 2]);
    *mn = t[0];
    *reps_out = reps;
    free(t);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 c_pingpong MAX_BYTES [SAMPLES] [MIN_SAMPLE_S] [SIZE ...]\n");
        MPI_Finalize();
        return 2;
    }
    long max_bytes = atol(argv[1]);
    int samples = argc > 2 ? atoi(argv[2]) : 7;
    double min_s = argc > 3 ? atof(argv[3]) : 0.005;
    int nsizes = 0;
    long *sizes = malloc(sizeof(long) * 64 + sizeof(long) * (argc > 4 ? argc : 0));
    if (argc > 4) {
        for (int i = 4; i < argc; i++) sizes[nsizes++] = atol(argv[i]);
    } else {
        for (long s = 1; s <= max_bytes; s *= 2) sizes[nsizes++] = s;
    }
    long biggest = 1;
    for (int i = 0; i < nsizes; i++) if (sizes[i] > biggest) biggest = sizes[i];
    char *a = page_buffer((size_t)biggest * WINDOW);
    char *b = page_buffer((size_t)biggest * WINDOW);
    memset(a, 1, (size_t)biggest * WINDOW);
    memset(b, 2, (size_t)biggest * WINDOW);
    if (rank == 0) printf("# size_bytes oneway_median_s oneway_min_s pingpong_Bps stream_Bps\n");
    for (int i = 0; i < nsizes; i++) {
        long n = sizes[i];
        double med, mn, smed, smn;
        long reps, sreps;
        measure(pingpong_adapter, a, b, n, samples, min_s, rank, &med, &mn, &reps);
        measure(stream, a, b, n, samples, min_s, rank, &smed, &smn, &sreps);
        if (rank == 0)
            printf("%ld %.6e %.6e %.6e %.6e\n", n, med / 2, mn / 2, n / (med / 2),
                   (double)n * WINDOW / smed);
        fflush(stdout);
    }
    free(a);
    free(b);
    free(sizes);
    MPI_Finalize();
    return 0;
}
