# frozen_string_literal: true

module Shop
  class OutOfStock < StandardError; end

  # A shopping cart with coupons and VAT.
  class Cart
    VAT = { 'DE' => 19, 'FR' => 20 }.freeze
    attr_reader :items, :country

    def initialize(country, stock = {})
      @country = country
      @stock = stock
      @items = []
      @coupons = []
    end

    def add(sku, price_cents, qty = 1)
      raise OutOfStock, "#{sku}: only #{@stock.fetch(sku, 0)} left" if @stock.fetch(sku, 0) < qty

      existing = @items.find { |i| i[:sku] == sku }
      if existing
        existing[:qty] += qty
      else
        @items << { sku: sku, price_cents: price_cents, qty: qty }
      end
      @stock[sku] -= qty
      self
    end

    def subtotal
      items.sum { |i| i[:price_cents] * i[:qty] }
    end

    def vat
      rate = VAT.fetch(country)
      (subtotal * rate / 100.0).round
    end

    def self.empty(country)
      new(country, {})
    end

    def to_receipt
      lines = items.map { |i| format('%-10s %3d x %8.2f', i[:sku], i[:qty], i[:price_cents] / 100.0) }
      lines << format('TOTAL %.2f %s', (subtotal + vat) / 100.0, country)
      lines.join("\n")
    end
  end
end
