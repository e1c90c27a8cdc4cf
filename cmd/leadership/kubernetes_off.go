//go:build leadership_no_kubernetes

package main

// kubernetesLeftOut is why this build cannot open k8s:// URLs.
const kubernetesLeftOut = "this program was built with the tag leadership_no_kubernetes"
