use strict; no warnings;
my %props = (
  IsAlnum => qr/\p{IsAlnum}/, IsAlpha => qr/\p{IsAlpha}/, IsN => qr/\p{IsN}/,
  IsLower => qr/\p{IsLower}/, Ll => qr/\p{Ll}/, IsSc => qr/\p{IsSc}/, IsSo => qr/\p{IsSo}/,
  C => qr/\p{C}/, Space => qr/\s/,
);
for my $name (sort keys %props) {
  my $re = $props{$name}; my @r; my $start = -1;
  for my $cp (0 .. 0x110000) {
    my $in = ($cp < 0x110000 && !($cp >= 0xD800 && $cp <= 0xDFFF) && do { my $c = chr($cp); utf8::upgrade($c); $c =~ $re }) ? 1 : 0;
    if ($in && $start < 0) { $start = $cp }
    elsif (!$in && $start >= 0) { push @r, sprintf("%X-%X", $start, $cp - 1); $start = -1 }
  }
  print "$name ", join(" ", @r), "\n";
}
