/*
 * error.h -- the thread-local last-error message behind uh_errmsg().
 */
#ifndef UH_ERROR_H
#define UH_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Record code and a printf-style message for uh_errmsg(); returns code so
 * callers can write `return uh_err_set(UH_EINVAL, "...")`. */
int uh_err_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Forget the last message (called at the start of public calls that can
 * fail, so uh_errmsg() never describes an older call). */
void uh_err_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* UH_ERROR_H */
