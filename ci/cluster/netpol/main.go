// kube-network-policies (SIG Network's NetworkPolicy agent, sigs.k8s.io/kube-network-policies) as the test
// control plane runs it: upstream's controller, unmodified, decides each new connection of the pods from the
// NetworkPolicies, namespaces and pods it watches; this program only sends it the packets.
//
// Upstream sends them with an nftables rule whose `queue` expression hands a connection's first packet to
// the controller's NFQUEUE. The test machine's kernel has no `queue` expression (the rule is refused,
// ENOENT), so upstream's own rules never load (its controller logs that and goes on serving its queue);
// it does have nftables' x_tables compatibility and the x_tables NFQUEUE target, which queue to the same
// place. This program installs the same interception in a table of its own with that target, for every
// new connection from or to an address of the pods' network:
//
//	table ip <table> { chain postrouting { type filter hook postrouting priority srcnat - 5
//	  meta skuid 0 accept                      # upstream's: the node's own root traffic (probes)
//	  ct state established,related accept      # upstream's: a connection is decided once
//	  ip saddr <pod network> NFQUEUE num <queue>
//	  ip daddr <pod network> NFQUEUE num <queue> } }
//
// Upstream queues only the addresses of its node's pods that a policy selects; its verdict
// (evaluatePacket: egress for the source pod, ingress for the destination pod) has no node filter. Every pod
// of the test cluster is forwarded through one network namespace, so one instance queueing every pod's
// connections decides both directions for every pod, on whichever fake node it is bound (a pod no policy
// selects is allowed by the same verdict).
//
// It serves /readyz (200 once the queue is read and the interception installed), /state (the resource
// versions of the objects the controller's informers hold, so that a test can wait until it has seen its
// changes) and upstream's /metrics. SIGTERM or SIGINT removes the interception first: with no reader the
// kernel drops what the target queues (`--remove` removes what a killed instance left).
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// sandboxNode is the node name upstream's controller is given. It only decides which pods upstream's own
// nftables set (never loaded here) would hold and when it would rewrite it: a name no node has keeps it
// from retrying its refused rules at every change of a pod.
const sandboxNode = "fusioninfer-test-sandbox"

func main() {
	os.Exit(run())
}

func run() int {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig of the control plane")
	queue := flag.Int("nfqueue-id", 100, "the NFQUEUE upstream's controller reads")
	cidr := flag.String("pod-network", "127.246.0.0/16", "the pods' addresses: their new connections are decided")
	table := flag.String("table", "fusioninfer-network-policies", "the nftables table (family ip) of the interception")
	address := flag.String("address", "127.0.0.1:0", "where /readyz, /state and /metrics are served")
	remove := flag.Bool("remove", false, "only remove the interception (one an instance that was killed left) and exit")
	klog.InitFlags(nil)
	flag.Parse()
	if *remove {
		removeInterception(*table)
		return 0
	}
	network, err := netip.ParsePrefix(*cidr)
	if err != nil || !network.Addr().Is4() {
		klog.Errorf("--pod-network %q: an IPv4 prefix is needed (%v)", *cidr, err)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Errorf("reading %s: %v", *kubeconfig, err)
		return 1
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Errorf("client: %v", err)
		return 1
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	policies, namespaces, pods := factory.Networking().V1().NetworkPolicies(), factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods()
	// Upstream asks the container runtime for pod addresses over NRI before the API server's, and with NRI
	// off its lookup of an address that is no pod's dereferences the absent plugin. Left on, given a
	// connection that is none: it never dials a runtime's socket (not even one of the machine's).
	os.Setenv("NRI_PLUGIN_SOCKET", "none")
	controller, err := networkpolicy.NewController(client, policies, namespaces, pods, nil, nil, nil, nil,
		networkpolicy.Config{QueueID: *queue, NodeName: sandboxNode})
	if err != nil {
		klog.Errorf("upstream's controller: %v", err)
		return 1
	}
	factory.Start(ctx.Done())
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			klog.Errorf("%v: not synced", informer)
			return 1
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- controller.Run(ctx) }()

	var ready atomic.Bool
	listener, err := net.Listen("tcp", *address)
	if err != nil {
		klog.Errorf("listening on %s: %v", *address, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/state", func(w http.ResponseWriter, _ *http.Request) {
		state := map[string]map[string]string{"networkpolicies": {}, "namespaces": {}, "pods": {}}
		all := labels.Everything()
		list, _ := policies.Lister().List(all)
		for _, o := range list {
			state["networkpolicies"][o.Namespace+"/"+o.Name] = o.ResourceVersion
		}
		spaces, _ := namespaces.Lister().List(all)
		for _, o := range spaces {
			state["namespaces"][o.Name] = o.ResourceVersion
		}
		running, _ := pods.Lister().List(all)
		for _, o := range running {
			state["pods"][o.Namespace+"/"+o.Name] = o.ResourceVersion
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(state)
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = server.Serve(listener) }()
	fmt.Printf("serving on %s\n", listener.Addr())

	if err := waitForReader(ctx, stopped, *queue); err != nil {
		klog.Errorf("upstream's controller: %v", err)
		return 1
	}
	if err := intercept(*table, network, uint16(*queue)); err != nil {
		klog.Errorf("installing the interception: %v", err)
		return 1
	}
	defer removeInterception(*table)
	ready.Store(true)
	klog.Infof("new connections of %s go to queue %d", network, *queue)

	select {
	case <-ctx.Done():
	case err := <-stopped:
		klog.Errorf("upstream's controller stopped: %v", err)
		return 1
	}
	removeInterception(*table)
	select { // upstream's controller closes its queue and removes its (absent) table
	case <-stopped:
	case <-time.After(5 * time.Second):
	}
	return 0
}

// waitForReader waits until a socket is bound to QUEUE, as the kernel lists it: upstream's controller reads
// it once its caches have synced.
func waitForReader(ctx context.Context, stopped <-chan error, queue int) error {
	for {
		bound, err := queueBound(queue)
		if err != nil {
			return err
		}
		if bound {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-stopped:
			return fmt.Errorf("stopped before reading its queue: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func queueBound(queue int) (bool, error) {
	file, err := os.Open("/proc/net/netfilter/nfnetlink_queue")
	if errors.Is(err, os.ErrNotExist) { // listed once a first queue is bound
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) > 0 && fields[0] == strconv.Itoa(queue) {
			return true, nil
		}
	}
	return false, lines.Err()
}

// intercept installs the table described at the top of this file, replacing any left before.
func intercept(name string, network netip.Prefix, queue uint16) error {
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Name: name, Family: nftables.TableFamilyIPv4}
	conn.AddTable(table) // add, delete, add: a table left by an earlier run goes in the same transaction
	conn.DelTable(table)
	conn.AddTable(table)
	chain := conn.AddChain(&nftables.Chain{
		Name: "postrouting", Table: table, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookPostrouting,
		Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource - 5),
	})
	rule := func(exprs ...expr.Any) { conn.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: exprs}) }
	rule(&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 0, 0, 0}},
		&expr.Verdict{Kind: expr.VerdictAccept})
	rule(&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Xor: []byte{0, 0, 0, 0},
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
		&expr.Verdict{Kind: expr.VerdictAccept})
	mask := net.CIDRMask(network.Bits(), 32)
	for _, offset := range []uint32{12, 16} { // the IPv4 header's source, then destination address
		rule(&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: network.Masked().Addr().AsSlice()},
			nfqueueTarget(queue))
	}
	return conn.Flush()
}

// nfqueueTarget is x_tables' NFQUEUE target, revision 3 (struct xt_NFQ_info_v3: queue number, number of
// queues, flags; in the host's byte order, padded to 8 bytes as x_tables aligns it): no bypass, so a packet
// is dropped while nothing reads the queue, as upstream's default (--fail-open=false) does.
func nfqueueTarget(queue uint16) *expr.Target {
	info := make(xt.Unknown, 8)
	binary.NativeEndian.PutUint16(info[0:], queue)
	binary.NativeEndian.PutUint16(info[2:], 1)
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &info}
}

func removeInterception(name string) {
	conn, err := nftables.New()
	if err != nil {
		klog.Errorf("removing the interception: %v", err)
		return
	}
	conn.DelTable(&nftables.Table{Name: name, Family: nftables.TableFamilyIPv4})
	if err := conn.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		klog.Errorf("removing the interception: %v", err)
	}
}
