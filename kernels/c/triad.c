/* STREAM triad in C, the yardstick for the numba triad (benchmarks/triad_bench.py).
 *
 * Built at run time with `gcc -O3 -march=native -shared -fPIC`.  Like the numba
 * driver, the repetition loop is inside the timed region and the clock is read
 * once before and once after it.  The empty asm with a "memory" clobber after
 * each repetition stops the compiler from proving repetitions redundant.
 */
#include <time.h>

double triad(double *restrict a, const double *restrict b, const double *restrict c,
             double s, long n, long reps)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        __asm__ volatile("" : : "r"(a) : "memory");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}
