/* libFuzzer harness for sweep plans (imp_sweep_plan_load / _parse, format in
 * include/impulse/sweep.h): what parses is printed back (imp_sweep_plan_text)
 * and must parse again to the same tasks, and every setting is read through
 * the typed getters as `sweep run` does. Seeds: tests/fuzz/corpus/plan.
 * See scripts/fuzz.sh. */
#include "fuzz_util.h"
#include "impulse/sweep.h"

static void same_plan(const imp_sweep_plan *a, const imp_sweep_plan *b)
{
    if (a->n_tasks != b->n_tasks) abort();
    for (int i = 0; i < a->n_tasks; i++) {
        const imp_sweep_task *x = &a->tasks[i], *y = &b->tasks[i];
        if (strcmp(x->id, y->id) || x->n_keys != y->n_keys || x->cost != y->cost) abort();
        for (int k = 0; k < x->n_keys; k++)
            if (strcmp(x->keys[k], y->keys[k]) || strcmp(x->values[k], y->values[k])) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the file reader (refuses NUL bytes, then parses) */
    const char *path = fuzz_scratch(".plan");
    imp_sweep_plan plan;
    if (fuzz_write(path, data, size) == 0 && imp_sweep_plan_load(&plan, path) == IMP_OK) {
        char *text = NULL;
        if (imp_sweep_plan_text(&plan, &text) == IMP_OK) {
            imp_sweep_plan again;
            /* a printed plan is a plan with the same tasks */
            if (imp_sweep_plan_parse(&again, text, "printed") != IMP_OK) abort();
            same_plan(&plan, &again);
            imp_sweep_plan_free(&again);
            free(text);
        }
        for (int i = 0; i < plan.n_tasks; i++) {
            const imp_sweep_task *t = &plan.tasks[i];
            for (int k = 0; k < t->n_keys; k++) {
                long l;
                double d;
                (void)imp_sweep_task_int(t, t->keys[k], 0, -1000000, 1000000, &l);
                (void)imp_sweep_task_double(t, t->keys[k], 0, -1e9, 1e9, &d);
            }
        }
        imp_sweep_plan_free(&plan);
    }
    remove(path);
    return 0;
}
