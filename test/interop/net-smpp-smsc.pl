#!/usr/bin/perl
# A small SMSC written with Net::SMPP (Debian's libnet-smpp-perl), for test/interop/net-smpp.test.ts.
# It is the other implementation: whatever it decodes from smppd's PDUs is printed as it decoded
# it, so the test can compare Net::SMPP's reading of our bytes with what we meant to send.
#
# Usage: perl net-smpp-smsc.pl [PORT [SYSTEM_ID [PASSWORD]]]
#   PORT 0 (the default) picks a free port. Listens on 127.0.0.1 and takes ONE connection.
#
# Stdout: one JSON object per line, each with an "event":
#   listening        {port}
#   bind_transceiver {seq, system_id, password, system_type, interface_version, addr_ton, addr_npi,
#                     address_range, status, answered_system_id}
#   submit_sm        {seq, every mandatory field, short_message_hex, tlvs: {"0x020c": {name, hex}}, message_id}
#   deliver_sm_sent  {seq, message_id}            (the receipt for a submit_sm)
#   deliver_sm_resp  {seq, status, message_id, tlvs}
#   enquire_link     {seq}                         (answered with enquire_link_resp)
#   enquire_link_resp{seq, status}                 (the answer to the one enquire_link this SMSC sends)
#   unbind           {seq}                         (answered with unbind_resp)
#   other            {seq, cmd, status}
#   eof              {after_unbind}                (the ESME closed the connection)
#   warning          {text}                        (Net::SMPP's warnings, e.g. an unknown TLV tag)
use strict;
use warnings;
use Net::SMPP;
use JSON::PP ();
use FindBin;
use lib $FindBin::Bin;
use InteropJson qw(emit tlvs_of);

$| = 1;
my ($port, $want_system_id, $want_password) = @ARGV;
$port = 0 unless defined $port;
$want_system_id = 'smppclient1' unless defined $want_system_id;
$want_password = 'password' unless defined $want_password;
my $SMSC_SYSTEM_ID = 'net-smpp-smsc';

# Net::SMPP's own warning on a closed connection is the eof event below.
$SIG{__WARN__} = sub { my $w = shift; chomp $w; emit('warning', text => $w) unless $w =~ /^premature eof/; };

my $listen = Net::SMPP->new_listen('127.0.0.1', port => $port, timeout => 60, smpp_version => 0x34)
  or die "cannot listen on 127.0.0.1:$port: $!";
emit('listening', port => $listen->sockport);

my $conn = $listen->accept or die "no connection within 60 s: $!";
close $listen;

my $bound = 0;
my $unbound = 0;
my $ids = 0;
while (1) {
  my $pdu = $conn->read_pdu;
  if (!defined $pdu) {
    emit('eof', after_unbind => $unbound ? JSON::PP::true : JSON::PP::false);
    last;
  }
  my $cmd = $pdu->{cmd};
  my $seq = $pdu->{seq};
  if ($cmd == Net::SMPP::CMD_bind_transceiver) {
    my $ok = $pdu->{system_id} eq $want_system_id && $pdu->{password} eq $want_password;
    my $status = $ok ? 0 : 0x0e; # ESME_RINVPASWD
    emit('bind_transceiver', seq => $seq, status => $status, answered_system_id => $SMSC_SYSTEM_ID,
      map { ($_ => $pdu->{$_}) } qw(system_id password system_type interface_version addr_ton addr_npi address_range));
    $conn->bind_transceiver_resp(seq => $seq, status => $status, system_id => $SMSC_SYSTEM_ID);
    if ($ok) {
      $bound = 1;
      # One probe of our own, to see smppd answer it.
      $conn->enquire_link(async => 1);
    }
  } elsif ($cmd == Net::SMPP::CMD_submit_sm) {
    my $message_id = sprintf('net-smpp-%04d', ++$ids);
    emit('submit_sm', seq => $seq, message_id => $message_id,
      (map { ($_ => $pdu->{$_}) } qw(service_type source_addr_ton source_addr_npi source_addr dest_addr_ton dest_addr_npi
        destination_addr esm_class protocol_id priority_flag schedule_delivery_time validity_period registered_delivery
        replace_if_present_flag data_coding sm_default_msg_id)),
      short_message_hex => unpack('H*', $pdu->{short_message}), tlvs => tlvs_of($pdu));
    $conn->submit_sm_resp(seq => $seq, message_id => $message_id);

    # The receipt (SMPP v3.4 Appendix B text; esm_class 0x04; receipted_message_id is a C-octet string).
    my $sm = $pdu->{short_message};
    $sm = substr($sm, 1 + ord($sm)) if ($pdu->{esm_class} & 0x40) && length($sm) > ord($sm);
    (my $excerpt = substr($sm, 0, 20)) =~ tr/\x20-\x7e/./c;
    my $text = "id:$message_id sub:001 dlvrd:001 submit date:2611231200 done date:2611231201 stat:DELIVRD err:000 text:$excerpt";
    my $dseq = $conn->deliver_sm(async => 1,
      source_addr_ton => $pdu->{dest_addr_ton}, source_addr_npi => $pdu->{dest_addr_npi}, source_addr => $pdu->{destination_addr},
      dest_addr_ton => $pdu->{source_addr_ton}, dest_addr_npi => $pdu->{source_addr_npi}, destination_addr => $pdu->{source_addr},
      esm_class => 0x04, data_coding => 0, short_message => $text,
      receipted_message_id => "$message_id\0", message_state => pack('C', 2));
    emit('deliver_sm_sent', seq => $dseq, message_id => $message_id, short_message => $text);
  } elsif ($cmd == Net::SMPP::CMD_deliver_sm_resp) {
    emit('deliver_sm_resp', seq => $seq, status => $pdu->{status}, message_id => $pdu->{message_id}, tlvs => tlvs_of($pdu));
  } elsif ($cmd == Net::SMPP::CMD_enquire_link) {
    emit('enquire_link', seq => $seq);
    $conn->enquire_link_resp(seq => $seq);
  } elsif ($cmd == Net::SMPP::CMD_enquire_link_resp) {
    emit('enquire_link_resp', seq => $seq, status => $pdu->{status});
  } elsif ($cmd == Net::SMPP::CMD_unbind) {
    emit('unbind', seq => $seq);
    $conn->unbind_resp(seq => $seq);
    $unbound = 1;
    # Keep reading: smppd should close the connection now (an eof event follows).
  } else {
    emit('other', seq => $seq, cmd => sprintf('0x%08x', $cmd), status => $pdu->{status});
    $conn->generic_nack(seq => $seq, status => 0x03) unless $cmd & 0x80000000; # ESME_RINVCMDID
  }
}
exit 0;
