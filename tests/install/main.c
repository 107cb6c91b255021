/* An external program built against an installed impulse (tests/install/test_install.sh):
 * simulate a bouncing ball and check a dropped ball's first bounce height. */
#include <impulse/impulse.h>
#include <stdio.h>

int main(void)
{
    imp_sim_opts o;
    imp_trajset data;
    if (imp_sim_defaults("bouncing-ball", &o)) return fprintf(stderr, "%s\n", imp_last_error()), 1;
    o.n_steps = 100;
    if (imp_simulate("bouncing-ball", &o, &data)) return fprintf(stderr, "%s\n", imp_last_error()), 1;
    double q_last = data.q_clean[data.n_steps - 1];
    int ok = data.n_steps == 100 && q_last >= 0.0 && q_last <= o.q0;
    if (imp_sim_defaults("no-such-system", &o) == IMP_OK) ok = 0;
    printf("impulse %s: %d steps, q(end) = %.6f, error for an unknown system: %s\n", IMP_VERSION_STRING,
           data.n_steps, q_last, imp_last_error());
    imp_trajset_free(&data);
    return ok ? 0 : 1;
}
