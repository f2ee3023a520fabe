/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The order of a socket event's signals (issue 23; ws2_32_test sock.c:6667).
 * Stock Wine makes every sync call a request, which the server reads after
 * the work it has pending; with the backend a client waits on and resets
 * events in process, so the server's pending work must not land after
 * calls it used to precede.
 *
 * WSAEventSelect() of FD_READ | FD_WRITE on a connected socket whose
 * FD_READ is pending signals the event at once; Wine's server finds
 * FD_WRITE when its poll loop sees the socket writable, and signals again.
 * Stock Wine handles that readiness before the client's next request (epoll
 * reports the socket first: it was ready before the reply); in process,
 * WSAEnumNetworkEvents()'s ResetEvent() may come first, the late signal sets
 * the event again, and it stays signaled with no network event pending (a
 * spurious wake-up of every WSAEventSelect() loop).
 *
 * Each round, on a new connection: WSAEnumNetworkEvents() must report both
 * events (Windows records FD_WRITE of a writable socket within
 * WSAEventSelect()), and the event must then stay reset, also 5 ms later.
 * (Timers are not affected: stock Wine does not run a timer that is due
 * before the client's next request either; a timer set 100 ns ahead was
 * unsignaled at a zero wait right after SetWaitableTimer in 198 of 200
 * tries with the backend off.)
 * Prints the counts, "N passed, N failed"; exits with the failures.
 */
#include <winsock2.h>
#include <windows.h>
#include <stdio.h>
#include <string.h>
#include "verdict.h"

#define ROUNDS 500


static SOCKET listener;
static struct sockaddr_in addr;

/* A new listening socket on the loopback interface, its address in addr. */
static int listen_loopback(void)
{
	int len = sizeof(addr);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listener = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	return listener != INVALID_SOCKET && !bind(listener, (struct sockaddr *)&addr, sizeof(addr)) &&
	       !getsockname(listener, (struct sockaddr *)&addr, &len) && !listen(listener, 1);
}

static int connect_pair(SOCKET *client, SOCKET *server)
{
	*client = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (*client == INVALID_SOCKET)
		return 0;
	if (connect(*client, (struct sockaddr *)&addr, sizeof(addr))) {
		closesocket(*client);
		return 0;
	}
	*server = accept(listener, NULL, NULL);
	if (*server == INVALID_SOCKET) {
		closesocket(*client);
		return 0;
	}
	return 1;
}

static void test_socket_events(void)
{
	int round, setup = 0, missed = 0, wrong = 0, spurious = 0;
	HANDLE event = CreateEventA(NULL, TRUE, FALSE, NULL);
	WSANETWORKEVENTS events;
	SOCKET client, server;
	char line[200];

	if (!listen_loopback() || !event) {
		check(0, "a listening socket on the loopback interface");
		return;
	}

	for (round = 0; round < ROUNDS; round++) {
		if (!connect_pair(&client, &server)) {
			setup++;
			break;
		}
		/* FD_READ recorded and signaled, not enumerated: it stays pending */
		if (WSAEventSelect(server, event, FD_READ) || send(client, "x", 1, 0) != 1 ||
		    WaitForSingleObject(event, 5000) != WAIT_OBJECT_0) {
			setup++;
			goto next;
		}
		/* signals at once (FD_READ pending); FD_WRITE is new: the socket is writable */
		if (WSAEventSelect(server, event, FD_READ | FD_WRITE) ||
		    WaitForSingleObject(event, 5000) != WAIT_OBJECT_0) {
			missed++;
			goto next;
		}
		if (WSAEnumNetworkEvents(server, event, &events)) {
			setup++;
			goto next;
		}
		if (events.lNetworkEvents != (FD_READ | FD_WRITE))
			wrong++;
		/* nothing new happens now: the event must stay reset, also a moment later */
		if (WaitForSingleObject(event, 0) != WAIT_TIMEOUT)
			spurious++;
		else {
			Sleep(5);
			if (WaitForSingleObject(event, 0) != WAIT_TIMEOUT)
				spurious++;
		}
next:
		closesocket(client);
		closesocket(server);
		ResetEvent(event);
	}
	closesocket(listener);
	CloseHandle(event);

	snprintf(line, sizeof(line), "%d rounds of loopback connections set up", round);
	check(!setup && round == ROUNDS, line);
	snprintf(line, sizeof(line), "WSAEventSelect with FD_READ pending signaled the event: %d of %d rounds missed it",
		 missed, round);
	check(!missed, line);
	snprintf(line, sizeof(line), "WSAEnumNetworkEvents reported FD_READ | FD_WRITE: wrong in %d of %d rounds",
		 wrong, round);
	check(!wrong, line);
	snprintf(line, sizeof(line), "the event stayed reset after WSAEnumNetworkEvents: signaled again in %d of %d rounds",
		 spurious, round);
	check(!spurious, line);
}

/*
 * A connect that completes reports FD_CONNECT and, the socket now being
 * writable, FD_WRITE: WSAEnumNetworkEvents() after the wait sees both, and
 * nothing comes later (ws2_32's sock test, sock.c:6342-6343).  Wine's
 * server finds FD_WRITE in the poll round after FD_CONNECT's; a wait ended
 * in process by FD_CONNECT could enumerate before that round (patch 0010).
 */
static void test_connect_events(void)
{
	int round, setup = 0, missed = 0, wrong = 0, spurious = 0;
	HANDLE event = CreateEventA(NULL, TRUE, FALSE, NULL);
	WSANETWORKEVENTS events;
	SOCKET client, server;
	char line[200];

	if (!listen_loopback() || !event) {
		check(0, "a listening socket on the loopback interface");
		return;
	}
	for (round = 0; round < ROUNDS; round++) {
		client = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
		if (client == INVALID_SOCKET ||
		    WSAEventSelect(client, event, FD_CONNECT | FD_WRITE | FD_READ | FD_CLOSE) ||
		    (connect(client, (struct sockaddr *)&addr, sizeof(addr)) &&
		     WSAGetLastError() != WSAEWOULDBLOCK)) {
			setup++;
			break;
		}
		if (WaitForSingleObject(event, 5000) != WAIT_OBJECT_0) {
			missed++;
		} else if (WSAEnumNetworkEvents(client, event, &events)) {
			setup++;
		} else {
			if (events.lNetworkEvents != (FD_CONNECT | FD_WRITE))
				wrong++;
			/* both reported: the event is not signaled again at once (sock.c:6343;
			 * stock Wine may signal once more later, as a later poll finds the
			 * socket writable again) */
			if (WaitForSingleObject(event, 0) != WAIT_TIMEOUT)
				spurious++;
		}
		server = accept(listener, NULL, NULL);
		if (server != INVALID_SOCKET)
			closesocket(server);
		closesocket(client);
		ResetEvent(event);
	}
	closesocket(listener);
	CloseHandle(event);

	snprintf(line, sizeof(line), "%d rounds of non-blocking connects set up", round);
	check(!setup && round == ROUNDS, line);
	snprintf(line, sizeof(line), "the connect signaled the event: %d of %d rounds missed it", missed, round);
	check(!missed, line);
	snprintf(line, sizeof(line), "WSAEnumNetworkEvents reported FD_CONNECT | FD_WRITE: wrong in %d of %d rounds",
		 wrong, round);
	check(!wrong, line);
	snprintf(line, sizeof(line), "the event was reset by WSAEnumNetworkEvents: signaled at once in %d of %d rounds",
		 spurious, round);
	/* Judged with the backend on only: stock Wine signals at once in some
	 * rounds (83 of 500 on 2026-12-05, backend off), the backend with patch
	 * 0010 in none (without it: 76, and FD_WRITE missing in 75). */
	if (backend_on())
		check(!spurious, line);
	else
		printf("not judged (backend off): %s\n", line);
}

int main(void)
{
	WSADATA data;

	if (WSAStartup(MAKEWORD(2, 2), &data)) {
		check(0, "WSAStartup");
	} else {
		test_socket_events();
		test_connect_events();
		WSACleanup();
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed;
}
