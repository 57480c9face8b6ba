/* testbed/build-emmcsim and build-mmctest: kernel headers configured for a newer gcc than this one
 * (the reason and each symbol: testbed/build-emmcsim, before its make). */
#if defined(CONFIG_CC_HAS_COUNTED_BY) && !__has_attribute(__counted_by__)
#undef __counted_by
#define __counted_by(member)
#endif
#if defined(CONFIG_CC_HAS_COUNTED_BY_PTR) && (!__has_attribute(__counted_by__) || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 16))
#undef __counted_by_ptr
#define __counted_by_ptr(member)
#endif
#if defined(CONFIG_CC_HAS_ASSUME) && !__has_attribute(__assume__)
#undef __assume
#define __assume(expr)
#endif
#if defined(CONFIG_CC_HAS_MULTIDIMENSIONAL_NONSTRING) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 15
#undef __nonstring_array
#define __nonstring_array
#endif
