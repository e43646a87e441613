package main

func init() {
	register("TCP echo server on Colony's own poller", echoScenario)
}
