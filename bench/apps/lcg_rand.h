/* The C standard's example rand() (C11 7.22.2), which the accl ports use as
 * `c_rand()`: build an original Rodinia program with `-include lcg_rand.h`
 * to draw the same numbers (glibc's rand() is another generator). */
#include <stdlib.h>
static unsigned int lcg_next = 1;
static int lcg_rand(void) {
    lcg_next = lcg_next * 1103515245u + 12345u;
    return (int)((lcg_next / 65536u) % 32768u);
}
static void lcg_srand(unsigned int seed) { lcg_next = seed; }
#define rand lcg_rand
#define srand lcg_srand
#undef RAND_MAX
#define RAND_MAX 32767
