#include "harness.h"
static Suite *make_suite(void) { return suite_create("todo"); }
int main(void) { return harness_run(make_suite()); }
