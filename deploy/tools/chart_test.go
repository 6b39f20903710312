package tools

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// chartDir is the chart, relative to this module.
const chartDir = "../helm/rlsearch"

// helm runs the helm of this module's tool directive (go tool helm).
func helm(args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"tool", "helm"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes(), nil
}

// render is helm template of the chart as release "t" in namespace "ml"
// with the given --set values.
func render(t *testing.T, set ...string) []byte {
	t.Helper()
	args := []string{"template", "t", chartDir, "--namespace", "ml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := helm(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decoder decodes strictly: an unknown or duplicated field is an error.
func decoder() runtime.Decoder {
	sc := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme, autoscalingv2.AddToScheme} {
		if err := add(sc); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(sc, serializer.EnableStrict).UniversalDeserializer()
}

// objects decodes every document of a rendered chart into its typed
// k8s.io/api object.
type objects struct {
	sts      []*appsv1.StatefulSet
	deploys  []*appsv1.Deployment
	services map[string]*corev1.Service
	pdbs     []*policyv1.PodDisruptionBudget
	hpas     []*autoscalingv2.HorizontalPodAutoscaler
}

func decodeAll(t *testing.T, rendered []byte) *objects {
	t.Helper()
	dec := decoder()
	o := &objects{services: map[string]*corev1.Service{}}
	for i, doc := range bytes.Split(rendered, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i, err, doc)
		}
		switch v := obj.(type) {
		case *appsv1.StatefulSet:
			o.sts = append(o.sts, v)
		case *appsv1.Deployment:
			o.deploys = append(o.deploys, v)
		case *corev1.Service:
			o.services[v.Name] = v
		case *policyv1.PodDisruptionBudget:
			o.pdbs = append(o.pdbs, v)
		case *autoscalingv2.HorizontalPodAutoscaler:
			o.hpas = append(o.hpas, v)
		default:
			t.Fatalf("document %d: unexpected kind %v", i, gvk)
		}
	}
	return o
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// selects reports whether selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkPod checks what every container of the chart must have: probes on
// /healthz (startup, readiness, liveness), a preStop pause, a grace
// period above the pause plus the server's 30 s drain.
func checkPod(t *testing.T, name string, spec corev1.PodSpec) {
	t.Helper()
	for _, c := range spec.Containers {
		for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != intstr.FromString("http") {
				t.Errorf("%s/%s: %s probe %+v, want GET /healthz on port http", name, c.Name, what, p)
			}
		}
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
			t.Errorf("%s/%s: no preStop sleep", name, c.Name)
			continue
		}
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g <= c.Lifecycle.PreStop.Sleep.Seconds+30 {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want above preStop %d s + the 30 s drain", name, g, c.Lifecycle.PreStop.Sleep.Seconds)
		}
		if len(c.Args) == 0 || c.Args[0] != "serve" {
			t.Errorf("%s/%s: args %v, want rlsearch serve", name, c.Name, c.Args)
		}
	}
}

// flag returns the value after name in args.
func flag(args []string, name string) string {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// TestChartStrict renders the chart with several value sets, decodes every
// object strictly into the k8s.io/api types and checks that the parts fit:
// one StatefulSet per shard serving its shard directory, headless
// Services that select them, a router whose --shards names the Service
// over all shard pods, Services and PodDisruptionBudgets that select the
// pods they mean, GPUs when asked, the fetch init container for a URL.
func TestChartStrict(t *testing.T) {
	for _, c := range []struct {
		name string
		set  []string
		n    int
	}{
		{"defaults", nil, 4},
		{"one shard", []string{"shards=1", "shard.replicas=3"}, 1},
		{"dense on GPUs from a URL", []string{"shards=2", "index.source=url", "index.url=https://example.org/wiki18/", "shard.gpu.enabled=true", "shard.model.enabled=true", "router.onMissingShard=partial", "buildID=abc123", "router.hpa.enabled=false"}, 2},
		{"pvc subpath", []string{"index.pvc.subPath=wiki18", "shard.extraArgs={--bm25-parallel,4}"}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := decodeAll(t, render(t, c.set...))
			has := func(s string) bool { return slices.Contains(c.set, s) }
			if len(o.sts) != c.n {
				t.Fatalf("%d StatefulSets, want one per shard (%d)", len(o.sts), c.n)
			}
			all := o.services["t-rlsearch-shards"]
			if all == nil || all.Spec.ClusterIP != corev1.ClusterIPNone || !all.Spec.PublishNotReadyAddresses {
				t.Fatalf("the Service over every shard pod %+v: want headless, listing not-ready pods", all)
			}
			for i, s := range o.sts {
				dir := fmt.Sprintf("shard-%d-of-%d", i, c.n)
				pod := s.Spec.Template
				checkPod(t, s.Name, pod.Spec)
				args := pod.Spec.Containers[0].Args
				want := "/index/" + dir
				if has("index.pvc.subPath=wiki18") {
					want = "/index/wiki18/" + dir
				}
				if got := flag(args, "--index"); got != want {
					t.Errorf("%s serves --index %q, want %q", s.Name, got, want)
				}
				gov := o.services[s.Spec.ServiceName]
				if gov == nil || gov.Spec.ClusterIP != corev1.ClusterIPNone || !selects(gov.Spec.Selector, pod.Labels) || !selects(s.Spec.Selector.MatchLabels, pod.Labels) {
					t.Errorf("%s: governing Service %q %+v or selector does not select its pods %v", s.Name, s.Spec.ServiceName, gov, pod.Labels)
				}
				if !selects(all.Spec.Selector, pod.Labels) {
					t.Errorf("the Service over every shard misses %s's pods", s.Name)
				}
				for _, other := range o.sts[i+1:] {
					if selects(s.Spec.Selector.MatchLabels, other.Spec.Template.Labels) {
						t.Errorf("%s's selector also selects %s's pods", s.Name, other.Name)
					}
				}
				gpu := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceName("nvidia.com/gpu")]
				if has("shard.gpu.enabled=true") != (gpu.Value() == 1) || has("shard.gpu.enabled=true") != (flag(args, "--dense-backend") == "gpu") {
					t.Errorf("%s: GPU limit %v, --dense-backend %q", s.Name, gpu.String(), flag(args, "--dense-backend"))
				}
				if has("shard.model.enabled=true") != (flag(args, "--model") != "") {
					t.Errorf("%s: --model %q", s.Name, flag(args, "--model"))
				}
				url := has("index.source=url")
				if url != (len(pod.Spec.InitContainers) == 1 && len(s.Spec.VolumeClaimTemplates) == 1) {
					t.Errorf("%s: %d init containers, %d claim templates for index.source=url %v", s.Name, len(pod.Spec.InitContainers), len(s.Spec.VolumeClaimTemplates), url)
				}
				if url && !strings.Contains(strings.Join(pod.Spec.InitContainers[0].Args, " "), "https://example.org/wiki18/"+dir+".tar") {
					t.Errorf("%s: the fetch does not name %s.tar: %v", s.Name, dir, pod.Spec.InitContainers[0].Args)
				}
				if has("shard.extraArgs={--bm25-parallel,4}") && flag(args, "--bm25-parallel") != "4" {
					t.Errorf("%s: extra args missing: %v", s.Name, args)
				}
				pdbOK := false
				for _, p := range o.pdbs {
					if selects(p.Spec.Selector.MatchLabels, pod.Labels) && p.Spec.MaxUnavailable != nil && p.Spec.MaxUnavailable.IntValue() == 1 {
						pdbOK = true
					}
				}
				if !pdbOK {
					t.Errorf("%s: no PodDisruptionBudget keeping all but one of its pods", s.Name)
				}
			}
			if len(o.deploys) != 1 {
				t.Fatalf("%d Deployments, want the router", len(o.deploys))
			}
			r := o.deploys[0]
			checkPod(t, r.Name, r.Spec.Template.Spec)
			args := r.Spec.Template.Spec.Containers[0].Args
			if got := flag(args, "--shards"); got != "http://t-rlsearch-shards.ml.svc.cluster.local:8000" {
				t.Errorf("router --shards %q, want the Service over every shard pod", got)
			}
			if has("router.onMissingShard=partial") != (flag(args, "--on-missing-shard") == "partial") || has("buildID=abc123") != (flag(args, "--shard-build") == "abc123") {
				t.Errorf("router args %v", args)
			}
			svc := o.services["t-rlsearch"]
			if svc == nil || !selects(svc.Spec.Selector, r.Spec.Template.Labels) || svc.Spec.Ports[0].Port != 8000 {
				t.Errorf("the router Service %+v does not select the router pods on port 8000", svc)
			}
			for _, s := range o.sts {
				if selects(svc.Spec.Selector, s.Spec.Template.Labels) {
					t.Errorf("the router Service also selects %s's pods", s.Name)
				}
			}
			hpa := !has("router.hpa.enabled=false")
			if hpa != (len(o.hpas) == 1) || hpa != (r.Spec.Replicas == nil) {
				t.Errorf("%d HPAs, Deployment replicas %v, for hpa.enabled %v", len(o.hpas), r.Spec.Replicas, hpa)
			}
			if hpa {
				h := o.hpas[0]
				if h.Spec.ScaleTargetRef.Name != r.Name || h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.Metrics[0].Pods == nil || h.Spec.Metrics[0].Pods.Metric.Name != "rlsearch_http_requests_per_second" {
					t.Errorf("HPA %+v does not scale the router on its request rate", h.Spec)
				}
			}
		})
	}
}

// TestStrictDecoderRefusesUnknownFields: the decoder of TestChartStrict
// fails on a field the type lacks, so a typo in the chart cannot pass.
func TestStrictDecoderRefusesUnknownFields(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec:\n  replicaz: 2\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 80, targetport: http}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 1\n  replicas: 2\n",
	} {
		if _, _, err := decoder().Decode([]byte(doc), nil, nil); err == nil {
			t.Errorf("strict decoder accepted:\n%s", doc)
		}
	}
}

// TestChartRefusesBadValues: values that cannot work fail at render time
// with a message naming them.
func TestChartRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"index.source=url"}, "index.url"},
		{[]string{"index.source=s3"}, "pvc or url"},
		{[]string{"shards=0"}, "at least 1"},
		{[]string{"terminationGracePeriodSeconds=30"}, "preStopSeconds + 30"},
	} {
		args := []string{"template", "t", chartDir}
		for _, s := range c.set {
			args = append(args, "--set", s)
		}
		if _, err := helm(args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %v: err %v, want a failure naming %q", c.set, err, c.want)
		}
	}
}

// TestChartLint runs helm lint (also run by make test).
func TestChartLint(t *testing.T) {
	if out, err := helm("lint", "--strict", chartDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); err != nil {
		t.Fatal(err)
	}
}
