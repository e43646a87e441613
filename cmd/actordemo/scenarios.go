package main

func init() {
	register("supervision tree under random kills", supervisionScenario)
	register("TCP echo server on Colony's own poller", echoScenario)
}
