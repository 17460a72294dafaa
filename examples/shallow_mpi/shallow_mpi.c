/* The NCAR shallow-water model with a 2-D domain decomposition over MPI ranks,
 * timed for benchdb (docs/programs.md, "Whole runs of your own program").
 *
 * The loops are those of examples/shallow_fortran/shallow.f90 (paper 003,
 * Osprey et al., HPCS 2014, Listing 1 and Table I), in the same order and with
 * the same arithmetic, in C: index (i,j) there is [i-1 + (j-1)*(m+1)] here,
 * i contiguous.  Every field is staggered so that it has exactly one halo
 * column and one halo row (kernels/builtin/shallow/model.py STAGGER): a halo exchange
 * is a one-sided shift per axis, X phase then Y phase (paper 001 eq. 8), and
 * the Y phase carries the halo column so that the corner arrives.  On an axis
 * with one rank the "exchange" is the serial model's periodic copy, so one
 * rank runs exactly the serial model.
 *
 * Usage:
 *   shallow_mpi M N REPS          the serial sweep mode (no MPI calls): one
 *                                 M x N block, loops timed one by one, as
 *                                 examples/shallow_fortran/shallow does;
 *   shallow_mpi M N STEPS PX PY   a whole run under mpiexec on PX x PY ranks:
 *                                 the forward first step untimed, then STEPS
 *                                 timed leapfrog steps.
 *
 * The sweep mode prints BENCHDB checksum (u + v + p after the first step),
 * BENCHDB check, one BENCHDB time line per loop of benchdb.toml and
 * final_checksum (after 1 + 2 REPS steps; not a protocol line).  A whole run
 * prints, from rank 0, BENCHDB checksum (u + v + p after 1 + STEPS steps,
 * gathered and summed in the serial order, so that it equals the serial
 * model's bit for bit), BENCHDB check, and for every rank r
 *   BENCHDB rank r total <s>      wall time of the STEPS timed steps
 *   BENCHDB rank r loops <s>      of which in the loops
 *   BENCHDB rank r exchanges <s>  of which in the halo exchanges
 *   BENCHDB rank r cpu <s>        its CPU time over those steps: less than its
 *                                 total where other processes held its core.
 *
 * Built with -ffp-contract=off (Makefile): a fused multiply-add in a
 * vectorised loop body but not in its scalar remainder would make a point's
 * value depend on where the block boundaries fall.
 */

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The original model's constants (DT=90., DX=DY=1.E5, A=1.E6, ALPHA=.001). */
static const double DT = 90.0, DX = 1.0e5, DY = 1.0e5, A = 1.0e6, ALPHA = 0.001;
static const double PI = 3.14159265358979323846;
/* Largest relative mass change that passes the self-check (shallow.f90 says why). */
static const double MASS_TOLERANCE = 1.0e-11;

enum { CU, CV, Z, H, U, V, P, UNEW, VNEW, PNEW, UOLD, VOLD, POLD, NFIELDS };
/* Where each field's inner points start along i and j (its stagger): the halo
 * is index 0 where the offset is 1, else the last index. */
static const int OFF_I[NFIELDS] = {1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
static const int OFF_J[NFIELDS] = {0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0};

/* The 13 phases of one step, in order, and the loop each is timed as. */
enum { NPHASES = 13, NLOOPS = 13 };
static const char *PHASE_LOOP[NPHASES] = {"cu",   "cv",       "z",    "h",    "boundary",
                                          "unew", "vnew",     "pnew", "boundary", "uold",
                                          "vold", "pold",     "copy"};
static const char *LOOP_NAME[NLOOPS] = {"cu",   "cv",   "z",    "h",        "unew", "vnew", "pnew",
                                        "uold", "vold", "pold", "boundary", "copy", "step"};
static const int EXCHANGE_1[] = {CU, CV, Z, H};
static const int EXCHANGE_2[] = {UNEW, VNEW, PNEW};

typedef struct {
    int m, n;          /* inner points of the local block */
    int px, py, cx, cy; /* rank grid and this rank's coordinates */
    int left, right, down, up;
    double *f[NFIELDS];
    double *sendbuf, *recvbuf;
    double fsdx, fsdy, tdts8, tdtsdx, tdtsdy, alf;
} Block;

#define AT(b, k, i, j) ((b)->f[k][(size_t)(i) + (size_t)(j) * (size_t)((b)->m + 1)])

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(void) {
    fprintf(stderr, "usage: shallow_mpi M N REPS | shallow_mpi M N STEPS PX PY  "
                    "(integers >= 1; PX divides M and PY divides N)\n");
    exit(2);
}

static int positive(const char *text) {
    char *end;
    long v;
    if (!*text || strspn(text, "0123456789") != strlen(text)) usage();
    v = strtol(text, &end, 10);
    if (v < 1 || v > 1000000000L) usage();
    return (int)v;
}

static void alloc_block(Block *b, int m, int n) {
    size_t size = (size_t)(m + 1) * (size_t)(n + 1), edge = (size_t)(m > n ? m : n) + 1;
    b->m = m;
    b->n = n;
    for (int k = 0; k < NFIELDS; k++) {
        b->f[k] = calloc(size, sizeof(double));
        if (!b->f[k]) {
            fprintf(stderr, "shallow_mpi: cannot allocate 13 arrays of %d x %d reals\n", m + 1,
                    n + 1);
            exit(1);
        }
    }
    b->sendbuf = malloc(edge * sizeof(double));
    b->recvbuf = malloc(edge * sizeof(double));
}

/* The original initial conditions on the global (M+1) x (N+1) grid (shallow.f90
 * initial_state), of which this block keeps its (m+1) x (n+1) part starting at
 * global (cx m, cy n): the global arrays are periodic, so the block's halo is
 * already its neighbour's edge. */
static void initial_state(Block *b, int gm, int gn) {
    size_t gsize = (size_t)(gm + 1) * (size_t)(gn + 1);
    double *psi = malloc(gsize * sizeof(double)), *u = calloc(gsize, sizeof(double)),
           *v = calloc(gsize, sizeof(double)), *p = malloc(gsize * sizeof(double));
    double di = 2 * PI / gm, dj = 2 * PI / gn, el = gn * DX, pcf = PI * PI * A * A / (el * el);
    size_t ld = (size_t)gm + 1;
    if (!psi || !u || !v || !p) {
        fprintf(stderr, "shallow_mpi: cannot allocate the %d x %d initial fields\n", gm + 1,
                gn + 1);
        exit(1);
    }
    for (int j = 0; j <= gn; j++)
        for (int i = 0; i <= gm; i++) {
            psi[i + j * ld] = A * sin((i + 0.5) * di) * sin((j + 0.5) * dj);
            p[i + j * ld] = pcf * (cos(2 * (double)i * di) + cos(2 * (double)j * dj)) + 50000;
        }
    for (int j = 0; j < gn; j++)
        for (int i = 0; i < gm; i++) {
            u[(i + 1) + j * ld] = -(psi[(i + 1) + (j + 1) * ld] - psi[(i + 1) + j * ld]) / DY;
            v[i + (j + 1) * ld] = (psi[(i + 1) + (j + 1) * ld] - psi[i + (j + 1) * ld]) / DX;
        }
    for (int j = 0; j <= gn; j++) { /* periodic(u, 1, 0) and periodic(v, 0, 1) */
        u[0 + j * ld] = u[gm + j * ld];
        v[gm + j * ld] = v[0 + j * ld];
    }
    for (int i = 0; i <= gm; i++) {
        u[i + gn * ld] = u[i];
        v[i] = v[i + gn * ld];
    }
    for (int j = 0; j <= b->n; j++)
        for (int i = 0; i <= b->m; i++) {
            size_t g = (size_t)(b->cx * b->m + i) + (size_t)(b->cy * b->n + j) * ld;
            AT(b, U, i, j) = AT(b, UOLD, i, j) = u[g];
            AT(b, V, i, j) = AT(b, VOLD, i, j) = v[g];
            AT(b, P, i, j) = AT(b, POLD, i, j) = p[g];
        }
    free(psi);
    free(u);
    free(v);
    free(p);
}

/* The forward first step (TDT = DT, no filter), then leapfrog steps (2 DT, filter). */
static void step_constants(Block *b, int first) {
    double tdt = first ? DT : 2 * DT;
    b->alf = first ? 0 : ALPHA;
    b->fsdx = 4 / DX;
    b->fsdy = 4 / DY;
    b->tdts8 = tdt / 8;
    b->tdtsdx = tdt / DX;
    b->tdtsdy = tdt / DY;
}

/* The ten update loops of paper 003 Table I (flops, loads with reuse, stores
 * per point in shallow.f90's comments); restrict lets the compiler vectorise. */
static void calc_cu(int m, int n, double *restrict cu, const double *restrict p,
                    const double *restrict u) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            cu[i + 1 + j * ld] = 0.5 * (p[i + 1 + j * ld] + p[i + j * ld]) * u[i + 1 + j * ld];
}

static void calc_cv(int m, int n, double *restrict cv, const double *restrict p,
                    const double *restrict v) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            cv[i + (j + 1) * ld] = 0.5 * (p[i + (j + 1) * ld] + p[i + j * ld]) * v[i + (j + 1) * ld];
}

static void calc_z(int m, int n, double fsdx, double fsdy, double *restrict z,
                   const double *restrict u, const double *restrict v, const double *restrict p) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            z[i + 1 + (j + 1) * ld] =
                (fsdx * (v[i + 1 + (j + 1) * ld] - v[i + (j + 1) * ld]) -
                 fsdy * (u[i + 1 + (j + 1) * ld] - u[i + 1 + j * ld])) /
                (p[i + j * ld] + p[i + 1 + j * ld] + p[i + 1 + (j + 1) * ld] + p[i + (j + 1) * ld]);
}

static void calc_h(int m, int n, double *restrict h, const double *restrict p,
                   const double *restrict u, const double *restrict v) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            h[i + j * ld] = p[i + j * ld] + 0.25 * (u[i + 1 + j * ld] * u[i + 1 + j * ld] +
                                                    u[i + j * ld] * u[i + j * ld] +
                                                    v[i + (j + 1) * ld] * v[i + (j + 1) * ld] +
                                                    v[i + j * ld] * v[i + j * ld]);
}

static void calc_unew(int m, int n, double tdts8, double tdtsdx, double *restrict unew,
                      const double *restrict uold, const double *restrict z,
                      const double *restrict cv, const double *restrict h) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            unew[i + 1 + j * ld] =
                uold[i + 1 + j * ld] +
                tdts8 * (z[i + 1 + (j + 1) * ld] + z[i + 1 + j * ld]) *
                    (cv[i + 1 + (j + 1) * ld] + cv[i + (j + 1) * ld] + cv[i + j * ld] +
                     cv[i + 1 + j * ld]) -
                tdtsdx * (h[i + 1 + j * ld] - h[i + j * ld]);
}

static void calc_vnew(int m, int n, double tdts8, double tdtsdy, double *restrict vnew,
                      const double *restrict vold, const double *restrict z,
                      const double *restrict cu, const double *restrict h) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            vnew[i + (j + 1) * ld] =
                vold[i + (j + 1) * ld] -
                tdts8 * (z[i + 1 + (j + 1) * ld] + z[i + (j + 1) * ld]) *
                    (cu[i + 1 + (j + 1) * ld] + cu[i + (j + 1) * ld] + cu[i + j * ld] +
                     cu[i + 1 + j * ld]) -
                tdtsdy * (h[i + (j + 1) * ld] - h[i + j * ld]);
}

static void calc_pnew(int m, int n, double tdtsdx, double tdtsdy, double *restrict pnew,
                      const double *restrict pold, const double *restrict cu,
                      const double *restrict cv) {
    size_t ld = (size_t)m + 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            pnew[i + j * ld] = pold[i + j * ld] - tdtsdx * (cu[i + 1 + j * ld] - cu[i + j * ld]) -
                               tdtsdy * (cv[i + (j + 1) * ld] - cv[i + j * ld]);
}

/* The Robert-Asselin filter over the full (m+1) x (n+1) arrays; 5 flops. */
static void time_filter(int m, int n, double alf, double *restrict old, const double *restrict cur,
                        const double *restrict new) {
    size_t size = (size_t)(m + 1) * (size_t)(n + 1);
    for (size_t k = 0; k < size; k++) old[k] = cur[k] + alf * (new[k] - 2 * cur[k] + old[k]);
}

static void copy(int m, int n, double *restrict dst, const double *restrict src) {
    size_t size = (size_t)(m + 1) * (size_t)(n + 1);
    for (size_t k = 0; k < size; k++) dst[k] = src[k];
}

/* One field's halo, X phase then Y phase.  Along an axis where the inner
 * points start at index 1 the halo is index 0, a copy of the last inner index
 * of the neighbour before (the rank to the left / below); where they start at
 * 0 the halo is the last index, a copy of index 0 of the neighbour after.  On
 * an axis with one rank both neighbours are this rank: a local copy, the
 * serial model's periodic continuation. */
static void exchange(Block *b, int k) {
    int m = b->m, n = b->n;
    size_t ld = (size_t)m + 1;
    double *f = b->f[k];
    /* X phase: a column of n + 1 elements (halo row included), packed. */
    int src_i = OFF_I[k] ? m : 0, dst_i = OFF_I[k] ? 0 : m;
    if (b->px == 1) {
        for (int j = 0; j <= n; j++) f[dst_i + j * ld] = f[src_i + j * ld];
    } else {
        int to = OFF_I[k] ? b->right : b->left, from = OFF_I[k] ? b->left : b->right;
        for (int j = 0; j <= n; j++) b->sendbuf[j] = f[src_i + j * ld];
        MPI_Sendrecv(b->sendbuf, n + 1, MPI_DOUBLE, to, k, b->recvbuf, n + 1, MPI_DOUBLE, from, k,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int j = 0; j <= n; j++) f[dst_i + j * ld] = b->recvbuf[j];
    }
    /* Y phase: a row of m + 1 contiguous elements, halo column included. */
    int src_j = OFF_J[k] ? n : 0, dst_j = OFF_J[k] ? 0 : n;
    if (b->py == 1) {
        memcpy(f + dst_j * ld, f + src_j * ld, ld * sizeof(double));
    } else {
        int to = OFF_J[k] ? b->up : b->down, from = OFF_J[k] ? b->down : b->up;
        MPI_Sendrecv(f + src_j * ld, m + 1, MPI_DOUBLE, to, NFIELDS + k, f + dst_j * ld, m + 1,
                     MPI_DOUBLE, from, NFIELDS + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Phase k of one step; returns 1 for a halo phase (exchanges), 0 for a loop. */
static int phase(Block *b, int k) {
    int m = b->m, n = b->n;
    double **f = b->f;
    switch (k) {
    case 0: calc_cu(m, n, f[CU], f[P], f[U]); return 0;
    case 1: calc_cv(m, n, f[CV], f[P], f[V]); return 0;
    case 2: calc_z(m, n, b->fsdx, b->fsdy, f[Z], f[U], f[V], f[P]); return 0;
    case 3: calc_h(m, n, f[H], f[P], f[U], f[V]); return 0;
    case 4:
        for (int e = 0; e < 4; e++) exchange(b, EXCHANGE_1[e]);
        return 1;
    case 5: calc_unew(m, n, b->tdts8, b->tdtsdx, f[UNEW], f[UOLD], f[Z], f[CV], f[H]); return 0;
    case 6: calc_vnew(m, n, b->tdts8, b->tdtsdy, f[VNEW], f[VOLD], f[Z], f[CU], f[H]); return 0;
    case 7: calc_pnew(m, n, b->tdtsdx, b->tdtsdy, f[PNEW], f[POLD], f[CU], f[CV]); return 0;
    case 8:
        for (int e = 0; e < 3; e++) exchange(b, EXCHANGE_2[e]);
        return 1;
    case 9: time_filter(m, n, b->alf, f[UOLD], f[U], f[UNEW]); return 0;
    case 10: time_filter(m, n, b->alf, f[VOLD], f[V], f[VNEW]); return 0;
    case 11: time_filter(m, n, b->alf, f[POLD], f[P], f[PNEW]); return 0;
    default:
        copy(m, n, f[U], f[UNEW]);
        copy(m, n, f[V], f[VNEW]);
        copy(m, n, f[P], f[PNEW]);
        return 0;
    }
}

static void whole_step(Block *b) {
    for (int k = 0; k < NPHASES; k++) phase(b, k);
}

/* Sum over the full arrays (kernels/builtin/shallow/step.py state_checksum), i fastest. */
static double sum_full(const double *f, int m, int n) {
    double s = 0;
    size_t size = (size_t)(m + 1) * (size_t)(n + 1);
    for (size_t k = 0; k < size; k++) s += f[k];
    return s;
}

/* Sum of p over the m x n inner points, column by column (shallow.f90 mass). */
static double mass_of(const double *p, int m, int n) {
    double mass = 0;
    for (int j = 0; j < n; j++) {
        double col = 0;
        for (int i = 0; i < m; i++) col += p[i + j * ((size_t)m + 1)];
        mass += col;
    }
    return mass;
}

/* Ticks a clock read adds to an interval: the median of back-to-back reads. */
static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double clock_overhead(void) {
    enum { SAMPLES = 20001 };
    static double d[SAMPLES];
    for (int k = 0; k < SAMPLES; k++) {
        double t0 = now();
        d[k] = now() - t0;
    }
    qsort(d, SAMPLES, sizeof d[0], by_value); /* reads alternate between a few values */
    return d[SAMPLES / 2];
}

static int sweep(int m, int n, int reps) {
    Block b = {.px = 1, .py = 1};
    double seconds[NPHASES] = {0}, loop[NLOOPS] = {0};
    alloc_block(&b, m, n);
    initial_state(&b, m, n);
    double overhead = clock_overhead();
    step_constants(&b, 1);
    whole_step(&b);
    printf("BENCHDB checksum %.17e\n",
           sum_full(b.f[U], m, n) + sum_full(b.f[V], m, n) + sum_full(b.f[P], m, n));
    step_constants(&b, 0);
    double mass_before = mass_of(b.f[P], m, n);
    double start = now();
    for (int r = 0; r < reps; r++) whole_step(&b);
    double step = now() - start - overhead;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int k = 0; k < NPHASES; k++) {
            phase(&b, k);
            double t1 = now();
            seconds[k] += t1 - t0;
            t0 = t1;
        }
    }
    double drift = fabs(mass_of(b.f[P], m, n) - mass_before) / fabs(mass_before);
    if (drift <= MASS_TOLERANCE)
        printf("BENCHDB check pass\n");
    else
        printf("BENCHDB check fail mass drift %.3e\n", drift);
    for (int k = 0; k < NPHASES; k++)
        for (int l = 0; l < NLOOPS - 1; l++)
            if (!strcmp(PHASE_LOOP[k], LOOP_NAME[l])) loop[l] += seconds[k] - reps * overhead;
    loop[NLOOPS - 1] = step;
    for (int l = 0; l < NLOOPS; l++)
        printf("BENCHDB time %s %.17e\n", LOOP_NAME[l], loop[l] > 0 ? loop[l] : 0.0);
    printf("final_checksum %.17e\n",
           sum_full(b.f[U], m, n) + sum_full(b.f[V], m, n) + sum_full(b.f[P], m, n));
    return 0;
}

/* Field k of every rank, gathered on rank 0 into the global (M+1) x (N+1)
 * array and made periodic there, as the serial model holds it. */
static void gather(Block *b, int k, int gm, int gn, double *global) {
    int ranks = b->px * b->py, m = b->m, n = b->n, oi = OFF_I[k], oj = OFF_J[k];
    size_t block = (size_t)m * (size_t)n, ld = (size_t)gm + 1;
    double *mine = malloc(block * sizeof(double)), *all = NULL;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) mine[i + j * (size_t)m] = AT(b, k, oi + i, oj + j);
    if (global) all = malloc(block * (size_t)ranks * sizeof(double));
    MPI_Gather(mine, (int)block, MPI_DOUBLE, all, (int)block, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (global) {
        for (int r = 0; r < ranks; r++) {
            int cx = r % b->px, cy = r / b->px;
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++)
                    global[(size_t)(cx * m + oi + i) + (size_t)(cy * n + oj + j) * ld] =
                        all[(size_t)r * block + i + j * (size_t)m];
        }
        for (int j = 0; j <= gn; j++)
            global[(oi ? 0 : gm) + j * ld] = global[(oi ? gm : 0) + j * ld];
        for (int i = 0; i <= gm; i++)
            global[i + (oj ? 0 : gn) * ld] = global[i + (oj ? gn : 0) * ld];
        free(all);
    }
    free(mine);
}

static double global_mass(Block *b, int gm, int gn, double *global) {
    gather(b, P, gm, gn, global);
    return global ? mass_of(global, gm, gn) : 0;
}

static int whole_run(int gm, int gn, int steps, int px, int py) {
    int rank, ranks;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != px * py || gm % px || gn % py) {
        if (rank == 0)
            fprintf(stderr,
                    "shallow_mpi: %d ranks cannot hold a %d x %d decomposition of %d x %d; run "
                    "on PX x PY ranks with PX dividing M and PY dividing N\n",
                    ranks, px, py, gm, gn);
        MPI_Finalize();
        return 2;
    }
    Block b = {.px = px, .py = py, .cx = rank % px, .cy = rank / px};
    b.left = (b.cx + px - 1) % px + b.cy * px;
    b.right = (b.cx + 1) % px + b.cy * px;
    b.down = b.cx + ((b.cy + py - 1) % py) * px;
    b.up = b.cx + ((b.cy + 1) % py) * px;
    alloc_block(&b, gm / px, gn / py);
    initial_state(&b, gm, gn);
    double *global = rank == 0 ? malloc((size_t)(gm + 1) * (size_t)(gn + 1) * sizeof(double)) : NULL;

    step_constants(&b, 1);
    whole_step(&b); /* the untimed forward first step, which also first-touches */
    step_constants(&b, 0);
    double mass_before = global_mass(&b, gm, gn, global);

    double part[2] = {0, 0}; /* loops, exchanges */
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu_start = cpu_now(), start = now(), t0 = start;
    for (int s = 0; s < steps; s++)
        for (int k = 0; k < NPHASES; k++) {
            int halo = phase(&b, k);
            double t1 = now();
            part[halo] += t1 - t0;
            t0 = t1;
        }
    double mine[4] = {t0 - start, part[0], part[1], cpu_now() - cpu_start};
    double *all = rank == 0 ? malloc(4 * (size_t)ranks * sizeof(double)) : NULL;
    MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    double mass_after = global_mass(&b, gm, gn, global), sum = 0;
    const int state[3] = {U, V, P};
    for (int s = 0; s < 3; s++) {
        gather(&b, state[s], gm, gn, global);
        if (rank == 0) sum += sum_full(global, gm, gn);
    }
    if (rank == 0) {
        double drift = fabs(mass_after - mass_before) / fabs(mass_before);
        printf("BENCHDB checksum %.17e\n", sum);
        if (drift <= MASS_TOLERANCE)
            printf("BENCHDB check pass\n");
        else
            printf("BENCHDB check fail mass drift %.3e\n", drift);
        for (int r = 0; r < ranks; r++) {
            const double *t = all + 4 * r;
            printf("BENCHDB rank %d total %.17e\nBENCHDB rank %d loops %.17e\n"
                   "BENCHDB rank %d exchanges %.17e\nBENCHDB rank %d cpu %.17e\n",
                   r, t[0], r, t[1], r, t[2], r, t[3]);
        }
        fflush(stdout);
    }
    free(all);
    free(global);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4) return sweep(positive(argv[1]), positive(argv[2]), positive(argv[3]));
    if (argc == 6)
        return whole_run(positive(argv[1]), positive(argv[2]), positive(argv[3]),
                         positive(argv[4]), positive(argv[5]));
    usage();
    return 2;
}
