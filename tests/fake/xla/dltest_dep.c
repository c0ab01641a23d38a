/* tests/fake/xla/dltest_dep.c: a library only in the local scope of the XLA-like client (xla_client.c links it; nothing else does): where RTLD_DEFAULT and RTLD_NEXT find it depends on who asks (dl_lookups.c). */
#define DEP_EXPORT __attribute__((visibility("default")))

DEP_EXPORT int dltest_dep_value(void);

int dltest_dep_value(void)
{
    return 42;
}
