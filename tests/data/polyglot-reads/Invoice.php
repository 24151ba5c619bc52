<?php
declare(strict_types=1);

namespace Billing;

final class Line
{
    public function __construct(
        public readonly string $sku,
        public readonly int $qty,
        public readonly int $unitCents,
    ) {
    }

    public function net(): int
    {
        return $this->qty * $this->unitCents;
    }
}

trait Rounds
{
    public function roundCents(float $value): int
    {
        return (int) round($value);
    }
}

final class Invoice
{
    use Rounds;

    /** @var Line[] */
    private array $lines = [];

    public function add(Line $line): self
    {
        $this->lines[] = $line;
        return $this;
    }

    public function net(): int
    {
        return array_sum(array_map(fn (Line $l) => $l->net(), $this->lines));
    }

    public static function fromCsv(string $path): self
    {
        $fh = fopen($path, 'r');
        $header = fgetcsv($fh);
        $inv = new self();
        while (($row = fgetcsv($fh)) !== false) {
            $r = array_combine($header, $row);
            $inv->add(new Line($r['sku'], (int) $r['qty'], (int) $r['unit_cents']));
        }
        fclose($fh);
        return $inv;
    }

    public function format(): string
    {
        return sprintf('%d lines, %.2f net', count($this->lines), $this->net() / 100);
    }
}

function invoice_total(Invoice $invoice): int
{
    return $invoice->net();
}
