// netsched's packet-level backend: what runs inside ns-3 for every packet.
//
// Loaded into ns-3's Python bindings (cppyy) by netsched/ns3/engine.py;
// Python builds the fabric from the topology graph and runs the plan, and
// this file keeps the per-packet work in C++: netsched's 5-tuple routes and
// the ingress switches' DSCP rules (Router), DSCP classification into
// strict-priority classes (DscpFilter), connections that write queued
// transfers back to back at an optional rate (Conn) and receivers that find
// where each transfer ends (Sink). Python hears of finished transfers
// through the Bus, which stops the simulator so that the run loop can take
// them: no Python runs inside ns-3's event loop.
#ifndef NETSCHED_NS3_CORE_H
#define NETSCHED_NS3_CORE_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace netsched
{
using namespace ns3;

// A connection's 5-tuple (TCP, or UDP: the protocol is not keyed).
struct FlowKey
{
    uint32_t src, dst;
    uint16_t sport, dport;

    bool operator==(const FlowKey& o) const
    {
        return src == o.src && dst == o.dst && sport == o.sport && dport == o.dport;
    }
};

struct FlowKeyHash
{
    size_t operator()(const FlowKey& k) const
    {
        uint64_t a = (uint64_t(k.src) << 32) | k.dst;
        uint64_t b = (uint64_t(k.sport) << 16) | k.dport;
        return std::hash<uint64_t>()(a * 0x9E3779B97F4A7C15ULL ^ b);
    }
};

// What the run loop takes at each stop: transfers received, transfers whose
// last byte their sender wrote.
struct Bus
{
    std::vector<int64_t> received;
    std::vector<int64_t> written;
    bool stop_on_write = false;

    void Received(int64_t id)
    {
        received.push_back(id);
        Simulator::Stop();
    }

    void Written(int64_t id)
    {
        written.push_back(id);
        if (stop_on_write)
        {
            Simulator::Stop();
        }
    }
};

inline Bus&
GetBus()
{
    static Bus bus;
    return bus;
}

// Run until simulated time t (s) or until something the run loop must see
// happened, whichever is first; returns the simulator's time then.
inline double
RunUntil(double t)
{
    double now = Simulator::Now().GetSeconds();
    if (t <= now)
    {
        return now;
    }
    // the first nanosecond at or after t: ns-3's clock counts nanoseconds
    Time at = NanoSeconds(int64_t(std::ceil(t * 1e9 - 1e-6)));
    EventId stop = Simulator::Schedule(at - Simulator::Now(),
                                       static_cast<void (*)()>(&Simulator::Stop));
    Simulator::Run();
    bool reached = Simulator::Now() >= at;
    Simulator::Cancel(stop);
    // reached: exactly t, so that the run loop's timers at t are due
    return reached ? t : Simulator::Now().GetSeconds();
}

// Routing by netsched's own paths: an entry per 5-tuple (the controller's
// ECMP choice, computed in Python from the topology graph) with, at a
// connection's ingress switch, the DSCP its class rule sets; an entry per
// destination for anything else (a host's one link). Local delivery as any
// IPv4 node. An optical circuit switch forwards by its circuits instead.
class Router : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("netsched::Router")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<Router>();
        return tid;
    }

    // the 5-tuple leaves by interface oif; dscp >= 0: re-marked here
    void SetRoute(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t oif)
    {
        m_routes[FlowKey{src, dst, sport, dport}] = oif;
    }

    void SetDscp(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, int dscp)
    {
        FlowKey k{src, dst, sport, dport};
        if (dscp < 0)
        {
            m_dscp.erase(k);
        }
        else
        {
            m_dscp[k] = uint8_t(dscp);
        }
    }

    void ClearRoutes()
    {
        m_routes.clear();
    }

    void SetDefault(uint32_t dst, uint32_t oif)
    {
        m_default[dst] = oif;
    }

    // an optical circuit switch: it forwards by its circuits alone (what
    // enters port iif leaves by the port a circuit joins it to) and drops
    // what enters a port no circuit joins, as a dark OCS port does
    void SetCircuitSwitch()
    {
        m_ocs = true;
    }

    // the circuits now: port iif joined to port oif (0: iif is dark)
    void SetPatch(uint32_t iif, uint32_t oif)
    {
        if (oif == 0)
        {
            m_patch.erase(iif);
        }
        else
        {
            m_patch[iif] = oif;
        }
    }

    void ClearPatches()
    {
        m_patch.clear();
    }

    // a host: everything it sends leaves by its one interface
    void SetUplink(uint32_t oif)
    {
        m_uplink = oif;
    }

    uint64_t Unroutable() const
    {
        return m_unroutable;
    }

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override
    {
        uint32_t iface = m_uplink;
        if (iface == 0)
        {
            auto it = m_default.find(header.GetDestination().Get());
            if (it == m_default.end())
            {
                sockerr = Socket::ERROR_NOROUTETOHOST;
                return nullptr;
            }
            iface = it->second;
        }
        sockerr = Socket::ERROR_NOTERROR;
        return MakeRoute(header.GetDestination(), iface);
    }

    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback& mcb,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override
    {
        uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif))
        {
            lcb(p, header, iif);
            return true;
        }
        if (m_ocs)
        {
            auto c = m_patch.find(iif);
            if (c == m_patch.end() || !m_ipv4->IsUp(c->second))
            {
                m_unroutable++;
                ecb(p, header, Socket::ERROR_NOROUTETOHOST);
                return true;
            }
            ucb(MakeRoute(header.GetDestination(), c->second), p, header);
            return true;
        }
        FlowKey k{header.GetSource().Get(), header.GetDestination().Get(), 0, 0};
        uint8_t proto = header.GetProtocol();
        if ((proto == 6 || proto == 17) && p->GetSize() >= 4 &&
            header.GetFragmentOffset() == 0)
        {
            uint8_t ports[4];
            p->CopyData(ports, 4);
            k.sport = uint16_t(ports[0] << 8 | ports[1]);
            k.dport = uint16_t(ports[2] << 8 | ports[3]);
        }
        uint32_t iface = 0;
        auto it = m_routes.find(k);
        if (it != m_routes.end())
        {
            iface = it->second;
        }
        else
        {
            auto d = m_default.find(k.dst);
            if (d == m_default.end())
            {
                m_unroutable++;
                ecb(p, header, Socket::ERROR_NOROUTETOHOST);
                return true;
            }
            iface = d->second;
        }
        if (!m_ipv4->IsUp(iface))
        {
            m_unroutable++;
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return true;
        }
        auto m = m_dscp.find(k);
        if (m != m_dscp.end())
        {
            Ipv4Header h = header;
            h.SetTos(uint8_t(m->second << 2) | (header.GetTos() & 0x3));
            ucb(MakeRoute(header.GetDestination(), iface), p, h);
        }
        else
        {
            ucb(MakeRoute(header.GetDestination(), iface), p, header);
        }
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override
    {
    }

    void NotifyInterfaceDown(uint32_t) override
    {
    }

    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override
    {
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override
    {
    }

  private:
    Ptr<Ipv4Route> MakeRoute(Ipv4Address dst, uint32_t iface)
    {
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(dst);
        r->SetSource(m_ipv4->GetAddress(iface, 0).GetLocal());
        r->SetGateway(dst); // point-to-point: the next hop takes anything
        r->SetOutputDevice(m_ipv4->GetNetDevice(iface));
        return r;
    }

    Ptr<Ipv4> m_ipv4;
    std::unordered_map<FlowKey, uint32_t, FlowKeyHash> m_routes;
    std::unordered_map<FlowKey, uint8_t, FlowKeyHash> m_dscp;
    std::unordered_map<uint32_t, uint32_t> m_default;
    std::unordered_map<uint32_t, uint32_t> m_patch;
    bool m_ocs = false;
    uint32_t m_uplink = 0;
    uint64_t m_unroutable = 0;
};

// Class c of Q is DSCP CS(7-c): precedence p goes in class min(7-p, Q-1),
// so unmarked traffic is in the lowest class (netsched/qos.py's rule).
class DscpFilter : public Ipv4PacketFilter
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("netsched::DscpFilter")
                                .SetParent<Ipv4PacketFilter>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<DscpFilter>()
                                .AddAttribute("Classes",
                                              "Number of priority classes",
                                              UintegerValue(8),
                                              MakeUintegerAccessor(&DscpFilter::m_classes),
                                              MakeUintegerChecker<uint32_t>(1, 8));
        return tid;
    }

  private:
    int32_t DoClassify(Ptr<QueueDiscItem> item) const override
    {
        Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
        if (!ip)
        {
            return int32_t(m_classes) - 1;
        }
        int prec = ip->GetHeader().GetTos() >> 5;
        return std::min(7 - prec, int(m_classes) - 1);
    }

    uint32_t m_classes = 8;
};

// Per port: bytes sent (link use) and, per class, the deepest queue seen.
class PortMeter : public SimpleRefCount<PortMeter>
{
  public:
    PortMeter(uint32_t classes)
        : peak(classes, 0)
    {
    }

    void Tx(Ptr<const Packet> p)
    {
        bytes += p->GetSize();
        packets++;
    }

    void Depth(uint32_t cls, uint32_t, uint32_t now)
    {
        if (now > peak[cls])
        {
            peak[cls] = now;
        }
    }

    uint64_t bytes = 0;
    uint64_t packets = 0;
    std::vector<uint32_t> peak;
};

inline void
PortDepth(Ptr<PortMeter> m, uint32_t cls, uint32_t old, uint32_t now)
{
    m->Depth(cls, old, now);
}

// Installs the strict-priority classes on a device: a PrioQueueDisc with
// one band per class, DSCP-classified, each band a per-connection fair
// queue (FqCoDel with CoDel's target out of reach unless ECN marking is
// asked for: drops only when the class's packets overflow its limit).
inline Ptr<PortMeter>
InstallPort(Ptr<NetDevice> dev,
            uint32_t classes,
            uint32_t limit_packets,
            double ce_threshold_s,
            uint32_t quantum)
{
    DscpFilter::GetTypeId(); // registered before the helper looks it up
    TrafficControlHelper tch;
    std::string priomap;
    for (int i = 0; i < 16; i++)
    {
        priomap += (i ? " " : "") + std::to_string(std::min<uint32_t>(i, classes - 1));
    }
    uint16_t h = tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap", StringValue(priomap));
    tch.AddPacketFilter(h, "netsched::DscpFilter", "Classes", UintegerValue(classes));
    auto cids = tch.AddQueueDiscClasses(h, classes, "ns3::QueueDiscClass");
    std::string size = std::to_string(limit_packets) + "p";
    for (uint32_t c = 0; c < classes; c++)
    {
        if (ce_threshold_s > 0)
        {
            tch.AddChildQueueDisc(h,
                                  cids[c],
                                  "ns3::FqCoDelQueueDisc",
                                  "MaxSize",
                                  QueueSizeValue(QueueSize(size)),
                                  "UseEcn",
                                  BooleanValue(true),
                                  "CeThreshold",
                                  TimeValue(Seconds(ce_threshold_s)),
                                  "Target",
                                  StringValue("1000s"),
                                  "Interval",
                                  StringValue("10000s"));
        }
        else
        {
            tch.AddChildQueueDisc(h,
                                  cids[c],
                                  "ns3::FqCoDelQueueDisc",
                                  "MaxSize",
                                  QueueSizeValue(QueueSize(size)),
                                  "Target",
                                  StringValue("1000s"),
                                  "Interval",
                                  StringValue("10000s"));
        }
    }
    QueueDiscContainer qd = tch.Install(dev);
    Ptr<PortMeter> m = Create<PortMeter>(classes);
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PortMeter::Tx, m));
    Ptr<QueueDisc> root = qd.Get(0);
    for (uint32_t c = 0; c < classes; c++)
    {
        // a child has no device to take its quantum from: a packet's worth
        // per connection per round
        DynamicCast<FqCoDelQueueDisc>(root->GetQueueDiscClass(c)->GetQueueDisc())
            ->SetQuantum(quantum);
        root->GetQueueDiscClass(c)->GetQueueDisc()->TraceConnectWithoutContext(
            "PacketsInQueue",
            MakeBoundCallback(&PortDepth, m, c));
    }
    return m;
}

// The receiving end of one connection: counts bytes in order and tells the
// Bus each time a transfer's last byte arrived (its sender told where each
// transfer ends, Conn::Push).
class Sink : public SimpleRefCount<Sink>
{
  public:
    void Expect(uint64_t end, int64_t id)
    {
        m_ends.emplace_back(end, id);
        Check();
    }

    void Attach(Ptr<Socket> s)
    {
        m_sock = s;
        s->SetRecvCallback(MakeCallback(&Sink::Recv, Ptr<Sink>(this)));
    }

    uint64_t Received() const
    {
        return m_rx;
    }

  private:
    void Recv(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            if (p->GetSize() == 0)
            {
                break;
            }
            m_rx += p->GetSize();
        }
        Check();
    }

    void Check()
    {
        while (!m_ends.empty() && m_rx >= m_ends.front().first)
        {
            GetBus().Received(m_ends.front().second);
            m_ends.pop_front();
        }
    }

    Ptr<Socket> m_sock;
    uint64_t m_rx = 0;
    std::deque<std::pair<uint64_t, int64_t>> m_ends;
};

// A host's listening socket: hands each accepted connection to the Sink
// registered for its peer's address and port.
class Listener : public SimpleRefCount<Listener>
{
  public:
    Listener(uint8_t ack_tos)
        : m_ackTos(ack_tos)
    {
    }

    void Init(Ptr<Node> node, uint16_t port)
    {
        m_sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_sock->Listen();
        m_sock->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                  MakeCallback(&Listener::Accept, Ptr<Listener>(this)));
    }

    void Register(uint32_t peer, uint16_t port, Ptr<Sink> sink)
    {
        m_sinks[(uint64_t(peer) << 16) | port] = sink;
    }

  private:
    void Accept(Ptr<Socket> s, const Address& from)
    {
        InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
        auto it = m_sinks.find((uint64_t(a.GetIpv4().Get()) << 16) | a.GetPort());
        s->SetIpTos(m_ackTos); // the receivers' ACKs go in the top class
        if (it == m_sinks.end())
        {
            s->SetRecvCallback(MakeCallback(&Listener::Discard));
            return;
        }
        it->second->Attach(s);
    }

    static void Discard(Ptr<Socket> s)
    {
        while (s->Recv())
        {
        }
    }

    Ptr<Socket> m_sock;
    uint8_t m_ackTos;
    std::unordered_map<uint64_t, Ptr<Sink>> m_sinks;
};

// The sending end of one connection: transfers queued in order, each
// written whole (in chunks, as the socket takes them) before the next,
// at most at its rate where it has one, not at all while held. The DSCP
// of what is written is the transfer's class.
class Conn : public SimpleRefCount<Conn>
{
  public:
    Conn(Ptr<Sink> sink, uint32_t chunk, uint32_t lowat)
        : m_sink(sink),
          m_chunk(chunk),
          m_lowat(lowat)
    {
    }

    void Init(Ptr<Node> node, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport)
    {
        m_sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_sock->TraceConnectWithoutContext("NextTxSequence",
                                           MakeCallback(&Conn::NextTx, Ptr<Conn>(this)));
        m_sock->Bind(InetSocketAddress(Ipv4Address(src), sport));
        m_sock->SetConnectCallback(MakeCallback(&Conn::Connected, Ptr<Conn>(this)),
                                   MakeCallback(&Conn::Failed, Ptr<Conn>(this)));
        m_sock->SetSendCallback(MakeCallback(&Conn::Space, Ptr<Conn>(this)));
        m_sock->Connect(InetSocketAddress(Ipv4Address(dst), dport));
    }

    // queue a transfer: bytes, DSCP, rate in bytes/s (0: as fast as the
    // network takes it, < 0: held)
    void Push(int64_t id, uint64_t bytes, int dscp, double rate)
    {
        m_queued += bytes;
        m_sink->Expect(m_queued, id);
        m_items.push_back(Item{id, bytes, dscp, rate});
        Pump();
    }

    void SetRate(int64_t id, double rate)
    {
        for (auto& it : m_items)
        {
            if (it.id == id)
            {
                it.rate = rate;
            }
        }
        Pump();
    }

    void SetDscp(int64_t id, int dscp)
    {
        for (auto& it : m_items)
        {
            if (it.id == id)
            {
                it.dscp = dscp;
            }
        }
        if (!m_items.empty() && m_items.front().id == id)
        {
            Mark(dscp);
        }
    }

    // the sender is gone (its agent was killed): nothing more is written
    void Abort()
    {
        m_items.clear();
        m_aborted = true;
        if (m_sock)
        {
            m_sock->Close();
        }
    }

    // bytes the receiver acknowledged of everything written so far
    uint64_t Acked() const
    {
        if (!m_sock)
        {
            return 0;
        }
        Ptr<TcpSocketBase> t = DynamicCast<TcpSocketBase>(m_sock);
        uint64_t buffered = t ? t->GetTxBuffer()->Size() : 0;
        return m_written > buffered ? m_written - buffered : 0;
    }

    // of transfer id (the head, or not yet written: 0), bytes written
    uint64_t Written() const
    {
        return m_written;
    }

    Ptr<Socket> GetSocket() const
    {
        return m_sock;
    }

    bool IsConnected() const
    {
        return m_connected;
    }

  private:
    struct Item
    {
        int64_t id;
        uint64_t left;
        int dscp;
        double rate;
    };

    void Connected(Ptr<Socket>)
    {
        m_connected = true;
        Pump();
    }

    void Failed(Ptr<Socket>)
    {
        m_connected = false;
    }

    void Space(Ptr<Socket>, uint32_t)
    {
        Pump();
    }

    // the socket sent from its buffer: top it up if its unsent bytes fell
    // below the low-water mark
    void NextTx(SequenceNumber32, SequenceNumber32 now)
    {
        m_nextTx = now;
        if (!m_items.empty() && Unsent() < m_lowat)
        {
            Pump();
        }
    }

    // written to the socket, not yet sent once (TCP_NOTSENT_LOWAT's
    // measure: a rate, a hold or a class reaches the wire this promptly)
    uint32_t Unsent() const
    {
        Ptr<TcpSocketBase> t = DynamicCast<TcpSocketBase>(m_sock);
        if (!t)
        {
            return 0;
        }
        SequenceNumber32 tail = t->GetTxBuffer()->TailSequence();
        return tail > m_nextTx ? uint32_t(tail - m_nextTx) : 0;
    }

    void Mark(int dscp)
    {
        if (!m_sock)
        {
            return;
        }
        m_sock->SetIpTos(uint8_t(std::max(dscp, 0) << 2));
    }

    void Pump()
    {
        if (!m_connected || m_aborted)
        {
            return;
        }
        double now = Simulator::Now().GetSeconds();
        while (!m_items.empty())
        {
            Item& it = m_items.front();
            if (it.rate < 0)
            {
                return; // held until given a rate
            }
            if (!m_marked || m_markedId != it.id)
            {
                Mark(it.dscp);
                m_marked = true;
                m_markedId = it.id;
            }
            uint32_t room = m_sock->GetTxAvailable();
            uint32_t unsent = Unsent();
            room = unsent >= m_lowat ? 0 : std::min(room, m_lowat - unsent + m_chunk);
            if (room == 0)
            {
                return; // Space() or NextTx() calls again
            }
            uint64_t n = std::min<uint64_t>({it.left, room, m_chunk});
            if (it.rate > 0)
            {
                // within a tick of now counts as now: the clock moves in
                // nanoseconds, and a wake-up rounded to zero delay would
                // find the same time again, for ever
                if (m_nextAt > now + 1e-9)
                {
                    Wake(m_nextAt);
                    return;
                }
                m_nextAt = std::max(m_nextAt, now) + double(n) / it.rate;
            }
            int sent = m_sock->Send(Create<Packet>(uint32_t(n)));
            if (sent <= 0)
            {
                return;
            }
            it.left -= uint64_t(sent);
            m_written += uint64_t(sent);
            if (it.left == 0)
            {
                int64_t id = it.id;
                m_items.pop_front();
                GetBus().Written(id);
            }
        }
    }

    void Wake(double at)
    {
        if (m_wake.IsPending())
        {
            return;
        }
        Time d = Seconds(at - Simulator::Now().GetSeconds());
        m_wake = Simulator::Schedule(std::max(d, NanoSeconds(1)),
                                     &Conn::Pump,
                                     Ptr<Conn>(this));
    }

    Ptr<Socket> m_sock;
    Ptr<Sink> m_sink;
    uint32_t m_chunk;
    uint32_t m_lowat;
    SequenceNumber32 m_nextTx{0};
    std::deque<Item> m_items;
    uint64_t m_queued = 0;
    uint64_t m_written = 0;
    bool m_connected = false;
    bool m_aborted = false;
    bool m_marked = false;
    int64_t m_markedId = -1;
    double m_nextAt = 0.0;
    EventId m_wake;
};

// TCP's trouble, per run: retransmitted segments, timeouts (entries into
// the Loss state) and fast recoveries, counted over every socket watched.
struct TcpTrouble
{
    uint64_t retransmits = 0;
    uint64_t timeouts = 0;
    uint64_t recoveries = 0;
};

inline TcpTrouble&
GetTrouble()
{
    static TcpTrouble t;
    return t;
}

inline void
CountRetransmit(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                Ptr<const TcpSocketBase>)
{
    GetTrouble().retransmits++;
}

inline void
CountState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        GetTrouble().timeouts++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        GetTrouble().recoveries++;
    }
}

inline void
Watch(Ptr<Socket> s)
{
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&CountRetransmit));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&CountState));
}

// The objects Python holds, made here so that ns-3's reference counts
// own them (callbacks keep them alive after Python lets go).
inline Ptr<Sink>
MakeSink()
{
    return Create<Sink>();
}

inline Ptr<Listener>
MakeListener(Ptr<Node> node, uint16_t port, uint8_t ack_tos)
{
    Ptr<Listener> l = Create<Listener>(ack_tos);
    l->Init(node, port);
    return l;
}

inline Ptr<Conn>
MakeConn(Ptr<Node> node,
         uint32_t src,
         uint16_t sport,
         uint32_t dst,
         uint16_t dport,
         Ptr<Sink> sink,
         uint32_t chunk,
         uint32_t lowat)
{
    Ptr<Conn> c = Create<Conn>(sink, chunk, lowat);
    // opened once the simulation runs: a node's traffic control knows its
    // devices only from then on
    Simulator::ScheduleNow([c, node, src, sport, dst, dport]() {
        c->Init(node, src, sport, dst, dport);
        Watch(c->GetSocket());
    });
    return c;
}

// A node's IPv4 routing is netsched's Router (in place of the stack's).
inline Ptr<Router>
InstallRouter(Ptr<Node> node)
{
    Ptr<Router> r = CreateObject<Router>();
    node->GetObject<Ipv4>()->SetRoutingProtocol(r);
    return r;
}

// Device dev on node gets address ip (/32: routes are netsched's, not
// prefixes'); returns its interface index.
inline uint32_t
AddAddress(Ptr<Node> node, Ptr<NetDevice> dev, uint32_t ip)
{
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    int32_t i = ipv4->GetInterfaceForDevice(dev);
    if (i < 0)
    {
        i = int32_t(ipv4->AddInterface(dev));
    }
    ipv4->AddAddress(uint32_t(i), Ipv4InterfaceAddress(Ipv4Address(ip), Ipv4Mask(0xffffffffU)));
    ipv4->SetUp(uint32_t(i));
    return uint32_t(i);
}

// Queue-disc drops on a port, all classes.
inline uint64_t
PortDrops(Ptr<NetDevice> dev)
{
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    Ptr<QueueDisc> q = tc ? tc->GetRootQueueDiscOnDevice(dev) : nullptr;
    return q ? q->GetStats().nTotalDroppedPackets : 0;
}

// A new run in this process: nothing heard, nothing counted.
inline void
ResetRun()
{
    GetBus() = Bus();
    GetTrouble() = TcpTrouble();
}

} // namespace netsched

#endif
