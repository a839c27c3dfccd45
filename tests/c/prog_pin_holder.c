/*
 * prog_pin_holder.c -- the client that dies holding pins in test_pins.
 * Usage: prog_pin_holder <socket> <syncdir>
 *
 * Pins the root "pins.held" three times, writes its session slot into
 * <syncdir>/holder.ready and then waits to be SIGKILLed. Exits 3 if
 * nobody kills it within 30 s (so it never outlives a test).
 */
#include <stdio.h>
#include <unistd.h>

#include "harness.h"

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	uh_off obj = 0;
	uh_info info;
	uint32_t pin;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_pin_holder <socket> <syncdir>\n");
		return 2;
	}
	rc = uh_connect(argv[1], 0, &h);
	if (rc == 0) rc = uh_root_get(h, "pins.held", &obj);
	for (int i = 0; i < 3 && rc == 0; i++)
		rc = uh_pin(h, obj, &pin);
	if (rc == 0) rc = uh_heap_info(h, &info);
	if (rc != 0) {
		fprintf(stderr, "pin holder: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	char text[32];
	snprintf(text, sizeof(text), "%u", info.session);
	th_signal_file(argv[2], "holder.ready", text);
	for (int i = 0; i < 3000; i++)
		th_sleep_ms(10);
	fprintf(stderr, "pin holder: nobody killed me within 30 s\n");
	return 3;
}
