/* tests/compare/report_dump.c: writes a known report (two modes, a complex site) to argv[1] (.csv or .json) so that
 * test_ab.py can read it with Python's own csv and json modules. */
#include <math.h>
#include <stdio.h>

#include "compare/report.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.csv|OUT.json\n", argv[0]);
        return 2;
    }
    ozcmp_report *r = ozcmp_report_global();
    ozcmp_site a = {"cublasDgemm_v2", 0, 1, 1000, 900, 800, 1, "phase22"};
    ozcmp_site b = {"cublasDgemmStridedBatched", 1, 0, 64, 64, 64, 8, "phase22"};
    ozcmp_site c = {"cublasDgemm_v2", 0, 1, 1000, 900, 800, 1, "ozaki2/53"};
    ozcmp_site z = {"cublasZgemm_v2", 2, 0, 500, 400, 300, 1, "ozaki2/53"}; /* a complex call: ops C N */
    ozcmp_call_metrics mz = {3.0e-16, 2.0e-13, 2.5e-17, 0, 0, 200000};
    ozcmp_call_metrics m4 = {2.5e-16, 1.0e-12, 1.5e-17, 0, 0, 900000};
    ozcmp_call_metrics m1 = {1.5e-9, 3.25e-7, 2.0e-10, 0, 0, 900000};
    ozcmp_call_metrics m2 = {0.5e-9, 1.0e-7, 1.0e-10, 0, 0, 900000};
    ozcmp_call_metrics m3 = {0.0, 0.0, INFINITY, 0, 2, 32768};
    ozcmp_report_add(r, &a, &m1);
    ozcmp_report_add(r, &a, &m2);
    ozcmp_report_add(r, &b, &m3);
    ozcmp_report_add(r, &c, &m4);
    ozcmp_report_add(r, &z, &mz);
    ozcmp_report_add_skipped(r, &b, OZCMP_SKIP_CAPTURE);
    return ozcmp_report_write_file(argv[1]) == 0 ? 0 : 1;
}
